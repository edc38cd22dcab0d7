// Options of the simulator, their defaults, and the one place they are checked.
import { SvcIngestError } from '../errors.ts';

/**
 * How to start a simulator; every field optional.
 * @example await startSimulator({ seed: 7, failFirst: 1, webhookUrl: 'http://127.0.0.1:9000/hook' })
 */
export interface SimulatorOptions {
  port?: number; // 0 = ephemeral (default)
  host?: string; // default '127.0.0.1'
  seed?: number; // default 1; everything (data, fault draws, ids) deterministic for a seed
  latencyMs?: number; // each answer goes out this long after its request arrived (default 0)
  jitterMs?: number; // + uniform random 0..jitterMs
  failRate?: number; // fraction of transaction requests answered 500 (InternalServerError envelope)
  failFirst?: number; // fail (500) the first K attempts of each distinct batch (identity = hash of its sorted transactionIds)
  resetRate?: number; // fraction of requests whose socket is destroyed without an answer
  hangRate?: number; // fraction of requests never answered (until the client gives up)
  rate429?: number; // fraction answered 429 with Retry-After (seconds, see retryAfterS)
  retryAfterS?: number; // default 1
  poison?: string[]; // transactionIds: any batch containing one gets 500, always
  dropTicketCreates?: number; // the first K ticket creates are processed (202) but their answer is lost (connection reset)
  webhookUrl?: string; // where ticket updates are POSTed
  webhookSecret?: string; // when set, each webhook POST is signed (X-SVC-Timestamp, X-SVC-Signature: v1=HMAC-SHA256 of `${timestamp}.${body}`)
  ticketDelayMs?: number; // delay before each webhook update (default 100)
  sessionTtlMs?: number; // lifetime of minted session tokens (default 3_600_000)
  requireToken?: string; // if set, every endpoint except startSession and /__sim/* demands `Authorization: Bearer <token>` (401 otherwise)
  tls?: { cert: string; key: string; ca?: string; requestCert?: boolean }; // PEM contents; https, mTLS when requestCert
  /** Refuse (400) a code field's value outside docs/mapping.md's code lists (`simulate --strict-codes`). Default off. */
  strictCodes?: boolean;
  /**
   * Require paymentNetworkMerchantState of every merchant, as the service's documented list says, rather than only
   * where the merchant's country has states (US, CA, AU: the tool's reading). Default off.
   */
  stateEverywhere?: boolean;
  /** Most accepted transactions kept whole for `transactions()` (deliveries are always counted). Default 100_000. */
  keepTransactions?: number;
  /** Receives the simulator's events (start, faults changed, webhook sent or failed); default: none. */
  log?: (event: string, fields: Record<string, unknown>) => void;
}

/** The fault knobs that can change while the simulator runs. */
export type FaultOptions = Pick<
  SimulatorOptions,
  | 'latencyMs'
  | 'jitterMs'
  | 'failRate'
  | 'failFirst'
  | 'resetRate'
  | 'hangRate'
  | 'rate429'
  | 'retryAfterS'
  | 'poison'
  | 'dropTicketCreates'
>;

/** Faults with every default filled in. */
export interface Faults {
  latencyMs: number;
  jitterMs: number;
  failRate: number;
  failFirst: number;
  resetRate: number;
  hangRate: number;
  rate429: number;
  retryAfterS: number;
  poison: Set<string>;
  dropTicketCreates: number;
}

export const FAULT_KEYS = [
  'latencyMs',
  'jitterMs',
  'failRate',
  'failFirst',
  'resetRate',
  'hangRate',
  'rate429',
  'retryAfterS',
  'poison',
  'dropTicketCreates',
] as const;

export const DEFAULTS = {
  port: 0,
  host: '127.0.0.1',
  seed: 1,
  retryAfterS: 1,
  ticketDelayMs: 100,
  sessionTtlMs: 3_600_000,
  keepTransactions: 100_000,
} as const;

export function defaultFaults(): Faults {
  return {
    latencyMs: 0,
    jitterMs: 0,
    failRate: 0,
    failFirst: 0,
    resetRate: 0,
    hangRate: 0,
    rate429: 0,
    retryAfterS: DEFAULTS.retryAfterS,
    poison: new Set(),
    dropTicketCreates: 0,
  };
}

function bad(name: string, expected: string, got: unknown): SvcIngestError {
  const shown = typeof got === 'string' ? `"${got}"` : Array.isArray(got) ? 'an array' : String(got);
  return new SvcIngestError('USAGE_INVALID', `simulator option ${name}: expected ${expected}, got ${shown}`, {
    field: name,
  });
}

function checkRate(name: string, v: unknown): void {
  if (v !== undefined && (typeof v !== 'number' || !(v >= 0 && v <= 1)))
    throw bad(name, 'a number from 0 to 1', v);
}

function checkCount(name: string, v: unknown, max = Number.MAX_SAFE_INTEGER): void {
  if (v !== undefined && (!Number.isSafeInteger(v) || (v as number) < 0 || (v as number) > max)) {
    throw bad(name, `an integer from 0 to ${max}`, v);
  }
}

/** Check fault knobs (unknown keys refused); throws USAGE_INVALID naming the key. */
export function checkFaults(f: Record<string, unknown>): void {
  for (const key of Object.keys(f)) {
    if (!(FAULT_KEYS as readonly string[]).includes(key))
      throw bad(key, `one of ${FAULT_KEYS.join(', ')}`, 'unknown key');
  }
  checkCount('latencyMs', f.latencyMs, 600_000);
  checkCount('jitterMs', f.jitterMs, 600_000);
  checkRate('failRate', f.failRate);
  checkCount('failFirst', f.failFirst, 1_000);
  checkRate('resetRate', f.resetRate);
  checkRate('hangRate', f.hangRate);
  checkRate('rate429', f.rate429);
  checkCount('retryAfterS', f.retryAfterS, 86_400);
  checkCount('dropTicketCreates', f.dropTicketCreates, 1_000);
  const p = f.poison;
  if (p !== undefined && (!Array.isArray(p) || p.some((x) => typeof x !== 'string' || x.length === 0))) {
    throw bad('poison', 'an array of non-empty transactionId strings', p);
  }
}

/** Check every option once, at the boundary. */
export function checkOptions(o: SimulatorOptions): void {
  const {
    port,
    host,
    seed,
    webhookUrl,
    webhookSecret,
    ticketDelayMs,
    sessionTtlMs,
    requireToken,
    tls,
    keepTransactions,
    log,
    strictCodes,
    stateEverywhere,
    ...faults
  } = o;
  for (const [k, v] of [
    ['strictCodes', strictCodes],
    ['stateEverywhere', stateEverywhere],
  ] as const)
    if (v !== undefined && typeof v !== 'boolean') throw bad(k, 'true or false', v);
  checkCount('port', port, 65_535);
  if (host !== undefined && (typeof host !== 'string' || host.length === 0))
    throw bad('host', 'a host name', host);
  if (seed !== undefined && !Number.isSafeInteger(seed)) throw bad('seed', 'an integer', seed);
  checkFaults(faults);
  if (webhookUrl !== undefined) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(webhookUrl).protocol);
    } catch {}
    if (!ok) throw bad('webhookUrl', 'an http(s) URL', webhookUrl);
  }
  if (webhookSecret !== undefined && (typeof webhookSecret !== 'string' || webhookSecret.length === 0)) {
    throw bad('webhookSecret', 'a non-empty string', '(empty)');
  }
  checkCount('ticketDelayMs', ticketDelayMs, 3_600_000);
  if (sessionTtlMs !== undefined && (!Number.isSafeInteger(sessionTtlMs) || sessionTtlMs < 1)) {
    throw bad('sessionTtlMs', 'a positive integer of milliseconds', sessionTtlMs);
  }
  if (requireToken !== undefined && (typeof requireToken !== 'string' || requireToken.length === 0)) {
    throw bad('requireToken', 'a non-empty string', '(empty)');
  }
  if (tls !== undefined && (typeof tls.cert !== 'string' || typeof tls.key !== 'string')) {
    throw bad('tls', 'PEM strings cert and key', typeof tls);
  }
  checkCount('keepTransactions', keepTransactions);
  if (log !== undefined && typeof log !== 'function') throw bad('log', 'a function', typeof log);
}

/** Merge fault knobs into the live fault set. */
export function applyFaults(into: Faults, f: FaultOptions): void {
  if (f.latencyMs !== undefined) into.latencyMs = f.latencyMs;
  if (f.jitterMs !== undefined) into.jitterMs = f.jitterMs;
  if (f.failRate !== undefined) into.failRate = f.failRate;
  if (f.failFirst !== undefined) into.failFirst = f.failFirst;
  if (f.resetRate !== undefined) into.resetRate = f.resetRate;
  if (f.hangRate !== undefined) into.hangRate = f.hangRate;
  if (f.rate429 !== undefined) into.rate429 = f.rate429;
  if (f.retryAfterS !== undefined) into.retryAfterS = f.retryAfterS;
  if (f.poison !== undefined) into.poison = new Set(f.poison);
  if (f.dropTicketCreates !== undefined) into.dropTicketCreates = f.dropTicketCreates;
}
