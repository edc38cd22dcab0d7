// Wire helpers of the simulator: reading bodies, writing JSON answers and the service's error envelope.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { REQUEST_ID_HEADER } from '../client/models.ts';

/** Largest request body the simulator reads (bytes); larger bodies get 413. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;

/**
 * One field problem inside a ValidationException envelope.
 * @example { field: 'transactions[3].postedAmount', message: 'expected a string of integer minor units' }
 */
export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * The error body every endpoint answers with (FACTS.md).
 * @example { type: 'ValidationException', title: 'Validation failed', status: 400, validationErrors: [], requestId: '…' }
 */
export interface Envelope {
  type: string;
  title: string;
  status: number;
  detail?: string;
  validationErrors?: FieldProblem[];
  requestId: string;
}

/** An answer a handler produces: status, JSON body and extra headers. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Build an error reply with the envelope shape. */
export function errorReply(
  status: number,
  type: string,
  title: string,
  requestId: string,
  extra: { detail?: string; validationErrors?: FieldProblem[]; headers?: Record<string, string> } = {},
): Reply {
  const body: Envelope = { type, title, status, requestId };
  if (extra.detail !== undefined) body.detail = extra.detail;
  if (extra.validationErrors !== undefined) body.validationErrors = extra.validationErrors;
  return extra.headers ? { status, body, headers: extra.headers } : { status, body };
}

/** 400 ValidationException naming each field. */
export function validationReply(
  requestId: string,
  problems: FieldProblem[],
  title = 'Validation failed',
): Reply {
  return errorReply(400, 'ValidationException', title, requestId, { validationErrors: problems });
}

/** 400 HttpMessageNotReadable: not JSON or not the expected shape. */
export function unreadableReply(requestId: string, detail: string): Reply {
  return errorReply(400, 'HttpMessageNotReadable', 'Malformed request body', requestId, { detail });
}

/** Write a reply as JSON, echoing the request id in a header too. */
export function writeReply(res: ServerResponse, reply: Reply, requestId: string): void {
  const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    [REQUEST_ID_HEADER.toLowerCase()]: requestId,
    ...reply.headers,
  };
  res.writeHead(reply.status, headers);
  res.end(text);
}

/** Read the whole body, or undefined when it exceeds MAX_BODY_BYTES (the rest is drained). */
export function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on('data', (chunk: Buffer) => {
      if (tooBig) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooBig = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () =>
      resolve(tooBig ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)),
    );
    req.on('error', reject);
  });
}

/** Read the body of a method that carries one; otherwise drain it (so keep-alive goes on) and give undefined. */
export async function readBodyOf(req: IncomingMessage, method: string): Promise<Buffer | undefined> {
  if (method === 'POST' || method === 'PUT' || method === 'PATCH') return readBody(req);
  req.resume();
  return undefined;
}

/** Parse a JSON body; undefined when it is not JSON. */
export function parseJson(body: Buffer | undefined): { ok: true; value: unknown } | { ok: false } {
  if (!body || body.length === 0) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** True for a plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Describe a JSON value's type for messages ("got array"). */
export function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' && !Number.isFinite(v)) return 'non-finite number';
  return typeof v;
}
