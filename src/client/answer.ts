// A call to the service and its answer as the client's methods see them: what a call names, the answer's status,
// body and request id, and the check that a success answer carries what the caller needs.
import { type RequestInfo, SvcHttpError } from './errors.ts';
import type { ErrorEnvelope } from './models.ts';

/** One call: the method, path and what it sends. */
export interface Call {
  method: 'GET' | 'POST' | 'HEAD';
  path: string;
  requestId?: string;
  json?: unknown;
  /** false: the answer is not masked (startSession's token only). */
  guard?: boolean;
  /** A body already serialised as JSON, as text or its UTF-8 bytes (sent as application/json). */
  body?: string | Uint8Array;
  searchParams?: Record<string, string | number>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** An answer: its status, its parsed body, the request id it carries (the one sent otherwise). */
export interface Answer {
  status: number;
  body: unknown;
  requestId: string;
  info: RequestInfo;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A 2xx body that still carries error detail (FACTS.md): an envelope `type` or `validationErrors`. */
function bodyError(body: unknown): ErrorEnvelope | undefined {
  if (!isObject(body)) return undefined;
  if (typeof body.type === 'string' || Array.isArray(body.validationErrors)) return body as ErrorEnvelope;
  return undefined;
}

/** Refuses a success status whose body is an error, or that lacks what the caller needs. */
export function expectOk(a: Answer, statuses: number[], need?: (body: unknown) => string | undefined): void {
  const envelope = bodyError(a.body);
  const problem = !statuses.includes(a.status)
    ? `expected HTTP ${statuses.join(' or ')}`
    : envelope
      ? 'the body carries error detail'
      : need?.(a.body);
  if (problem) {
    throw new SvcHttpError({
      ...a.info,
      requestId: a.requestId,
      status: a.status,
      detail: problem,
      ...(envelope ? { envelope } : isObject(a.body) ? { envelope: a.body as ErrorEnvelope } : {}),
    });
  }
}
