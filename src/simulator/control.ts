// The simulator's control API under /__sim/: its stats, the deliveries per transaction, faults set while it
// runs, and a reset.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { REQUEST_ID_HEADER } from '../client/models.ts';
import type { EndpointDeps } from './endpoints.ts';
import { errorReply, parseJson, readBodyOf, unreadableReply, writeReply } from './http.ts';
import type { FaultOptions } from './options.ts';
import { deliveryCounts, snapshot } from './state.ts';
import type { TransactionsDeps } from './transactions.ts';

const REQUEST_ID = REQUEST_ID_HEADER.toLowerCase();

/** What the control API works on: the simulator's state and faults (ctx), and the simulator it sets and resets. */
export interface ControlDeps {
  ctx: EndpointDeps & Pick<TransactionsDeps, 'faults'>;
  sim: { setFaults(f: FaultOptions): void; reset(): void };
  /** Answers scripted by a test (`POST /__sim/answers`): path prefix → status, text, request id header. */
  scripted: ScriptedAnswers;
}

/** Test-only answers, written as they are: path prefix → status, the answer's text, its request id header. */
export type ScriptedAnswers = Map<string, { status: number; text: string; id?: string }>;

/** Answers one request to /__sim/… (GET stats, GET deliveries, POST faults, POST reset; 404 otherwise). */
export async function answerControl(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  c: ControlDeps,
): Promise<void> {
  const header = req.headers[REQUEST_ID];
  const method = req.method ?? 'GET';
  const requestId =
    (typeof header === 'string' && header.length > 0 ? header : undefined) ?? c.ctx.ids.uuid();
  const body = await readBodyOf(req, method);
  if (pathname === '/__sim/stats' && method === 'GET')
    return writeReply(res, { status: 200, body: snapshot(c.ctx.state) }, requestId);
  if (pathname === '/__sim/deliveries' && method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/x-ndjson', [REQUEST_ID]: requestId });
    let chunk = '';
    for (const [transactionId, count] of deliveryCounts(c.ctx.state)) {
      chunk += `${JSON.stringify({ transactionId, count })}\n`;
      if (chunk.length > 65_536) {
        res.write(chunk);
        chunk = '';
      }
    }
    res.end(chunk);
    return;
  }
  if (pathname === '/__sim/faults' && method === 'POST') {
    const parsed = parseJson(body);
    if (
      !parsed.ok ||
      typeof parsed.value !== 'object' ||
      parsed.value === null ||
      Array.isArray(parsed.value)
    ) {
      return writeReply(
        res,
        unreadableReply(requestId, 'expected a JSON object of fault options'),
        requestId,
      );
    }
    try {
      c.sim.setFaults(parsed.value as FaultOptions);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return writeReply(
        res,
        errorReply(400, 'ValidationException', 'Invalid fault options', requestId, { detail: message }),
        requestId,
      );
    }
    return writeReply(
      res,
      { status: 200, body: { ...c.ctx.faults, poison: [...c.ctx.faults.poison], requestId } },
      requestId,
    );
  }
  // Test-only: the answer's text (and request id header) for paths starting with `path`, as written; body null: off.
  if (pathname === '/__sim/answers' && method === 'POST') {
    const a = parseJson(body);
    const v = (a.ok ? a.value : {}) as { path?: string; status?: number; body?: string | null; id?: string };
    if (typeof v.path !== 'string')
      return writeReply(res, unreadableReply(requestId, 'expected {path, body}'), requestId);
    if (typeof v.body !== 'string') c.scripted.delete(v.path);
    else c.scripted.set(v.path, { status: v.status ?? 200, text: v.body, ...(v.id ? { id: v.id } : {}) });
    return writeReply(res, { status: 200, body: { scripted: [...c.scripted.keys()], requestId } }, requestId);
  }
  if (pathname === '/__sim/reset' && method === 'POST') {
    c.scripted.clear();
    c.sim.reset();
    return writeReply(res, { status: 200, body: { reset: true, requestId } }, requestId);
  }
  writeReply(
    res,
    errorReply(404, 'NotFound', 'No such simulator control endpoint', requestId, {
      detail: `${method} ${pathname}`,
    }),
    requestId,
  );
}
