// Session tokens of the simulator: JWT-shaped (HS256 over a per-seed secret), minted by startSession, checked by redemptions.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The payload of a session token; `exp` is a millisecond epoch.
 * @example { sourceCustomerId: 'cust-0001', organizationId: 'org-1', sessionId: '…', scopes: [], iat: 1763700000000, exp: 1763703600000 }
 */
export interface SessionClaims {
  sourceCustomerId: string;
  organizationId: string;
  sessionId: string;
  scopes: string[];
  iat: number;
  exp: number;
}

/** Why a token was refused; the titles are the service's own (FACTS.md). */
export type SessionProblem = { title: 'Session Expired' | 'Invalid session token'; detail: string };

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/** Secret of a seed: tokens of one simulator are accepted by another with the same seed. */
export function sessionSecret(seed: number): Buffer {
  return createHash('sha256').update(`svc-simulator-session:${seed}`).digest();
}

export function mintToken(secret: Buffer, claims: SessionClaims): string {
  const body = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

export function verifyToken(
  secret: Buffer,
  token: string | undefined,
  nowMs: number,
): SessionClaims | SessionProblem {
  if (!token) return { title: 'Invalid session token', detail: 'the X-SVC-Session-Token header is missing' };
  const parts = token.split('.');
  if (parts.length !== 3)
    return { title: 'Invalid session token', detail: 'not a JWT (three dot-separated parts)' };
  const [h, p, sig] = parts as [string, string, string];
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { title: 'Invalid session token', detail: 'signature does not verify' };
  }
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return { title: 'Invalid session token', detail: 'payload is not JSON' };
  }
  const c = claims as Partial<SessionClaims>;
  if (typeof c.sourceCustomerId !== 'string' || typeof c.exp !== 'number') {
    return { title: 'Invalid session token', detail: 'payload lacks sourceCustomerId or exp' };
  }
  if (c.exp <= nowMs)
    return { title: 'Session Expired', detail: `token expired at ${new Date(c.exp).toISOString()}` };
  return c as SessionClaims;
}

export function isProblem(v: SessionClaims | SessionProblem): v is SessionProblem {
  return 'title' in v;
}
