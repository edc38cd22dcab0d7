// The simulator's HTTP(S) server: routing, request ids, auth, latency, stats, the /__sim/* control API, start/close.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TransactionNotification } from '../client/models.ts';
import { INSTITUTION_ID_HEADER, PATHS, REQUEST_ID_HEADER, SESSION_TOKEN_HEADER } from '../client/models.ts';
import { SvcIngestError } from '../errors.ts';
import { sleep } from '../sleep.ts';
import { anchorDay, buildCatalog, type Catalog } from './catalog.ts';
import { answerControl, type ScriptedAnswers } from './control.ts';
import type { EndpointDeps } from './endpoints.ts';
import { getRedemptions, getStoreLocations, startSession } from './endpoints.ts';
import type { Reply } from './http.ts';
import {
  errorReply,
  MAX_BODY_BYTES,
  parseJson,
  readBodyOf,
  unreadableReply,
  validationReply,
  writeReply,
} from './http.ts';
import type { FaultOptions, SimulatorOptions } from './options.ts';
import { applyFaults, checkFaults, checkOptions, DEFAULTS, defaultFaults } from './options.ts';
import { createIdSource, type IdSource } from './rng.ts';
import { sessionSecret } from './session.ts';
import type { SimState, SimulatorStats } from './state.ts';
import { bump, clearState, createState, deliveryCounts, snapshot } from './state.ts';
import { createTicketDesk, type TicketDesk } from './tickets.ts';
import type { TransactionsDeps } from './transactions.ts';
import { handleTransactions } from './transactions.ts';

/**
 * A running simulator.
 * @example const sim = await startSimulator({ seed: 3 }); await fetch(`${sim.url}/__sim/stats`); await sim.close();
 */
export interface Simulator {
  url: string; // e.g. http://127.0.0.1:41234 (no trailing slash)
  port: number;
  stats(): SimulatorStats;
  deliveries(): Map<string, number>; // transactionId -> times accepted in a 200 batch
  transactions(): Iterable<TransactionNotification>; // first accepted copy of each
  setFaults(f: FaultOptions): void;
  reset(): void; // forget deliveries, stats, tickets
  close(): Promise<void>; // also destroys hung sockets
}

type Route =
  | 'transactions'
  | 'startSession'
  | 'redemptions'
  | 'storeLocations'
  | 'createTicket'
  | 'getTicket'
  | 'notFound'
  | 'methodNotAllowed';

const TICKET_PREFIX = `${PATHS.tickets}/`;
const ROUTE_METHOD: Record<string, [Route, string]> = {
  [PATHS.transactions]: ['transactions', 'POST'],
  [PATHS.startSession]: ['startSession', 'POST'],
  [PATHS.redemptions]: ['redemptions', 'GET'],
  [PATHS.storeLocations]: ['storeLocations', 'POST'],
  [PATHS.tickets]: ['createTicket', 'POST'],
};
const REQUEST_ID = REQUEST_ID_HEADER.toLowerCase();
const SESSION_TOKEN = SESSION_TOKEN_HEADER.toLowerCase();
const INSTITUTION_ID = INSTITUTION_ID_HEADER.toLowerCase();

/** Route of a request, and the path key its stats are counted under (ticket ids collapsed). */
function route(method: string, pathname: string): { route: Route; statKey: string; allow?: string } {
  const hit = ROUTE_METHOD[pathname];
  if (hit) {
    return method === hit[1]
      ? { route: hit[0], statKey: pathname }
      : { route: 'methodNotAllowed', statKey: pathname, allow: hit[1] };
  }
  if (
    pathname.startsWith(TICKET_PREFIX) &&
    pathname.length > TICKET_PREFIX.length &&
    !pathname.includes('/', TICKET_PREFIX.length)
  ) {
    const statKey = `${PATHS.tickets}/{sourceTicketId}`;
    return method === 'GET'
      ? { route: 'getTicket', statKey }
      : { route: 'methodNotAllowed', statKey, allow: 'GET' };
  }
  return { route: 'notFound', statKey: '(unknown)' };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function tokenMatches(given: string | undefined, wanted: Buffer): boolean {
  if (!given?.startsWith('Bearer ')) return false;
  const b = Buffer.from(given.slice(7));
  return b.length === wanted.length && timingSafeEqual(b, wanted);
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  checkOptions(opts);
  const seed = opts.seed ?? DEFAULTS.seed;
  const host = opts.host ?? DEFAULTS.host;
  const keepTransactions = opts.keepTransactions ?? DEFAULTS.keepTransactions;
  const log = opts.log ?? (() => {});
  const faults = defaultFaults();
  applyFaults(faults, opts);
  const state = createState();
  const catalog = buildCatalog(seed, anchorDay(Date.now()));
  const wantedToken = opts.requireToken === undefined ? undefined : Buffer.from(opts.requireToken);
  const hung = new Set<ServerResponse>();

  const ctx: EndpointDeps & TransactionsDeps = {
    seed,
    faults,
    state,
    catalog,
    keepTransactions,
    rules: { strictCodes: opts.strictCodes === true, stateEverywhere: opts.stateEverywhere === true },
    secret: sessionSecret(seed),
    ids: createIdSource(seed),
    sessionTtlMs: opts.sessionTtlMs ?? DEFAULTS.sessionTtlMs,
    now: Date.now,
  };

  const desk = deskFor(opts, seed, catalog, state, log);
  const scripted: ScriptedAnswers = new Map();
  const parts: ServeParts = {
    ctx,
    desk,
    wantedToken,
    hung,
    jitter: createIdSource(seed, 'jitter'),
    scripted,
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    if (req.method === 'HEAD' && pathname === PATHS.transactions) {
      // svc-ingest send's connection check: answered as the route answers any method but POST (405), and counted
      // apart, so transaction request counts stay those of the batches.
      state.requests.preflight++;
      const requestId = header(req, REQUEST_ID) ?? ctx.ids.uuid();
      writeReply(
        res,
        errorReply(405, 'MethodNotAllowed', 'Method not allowed', requestId, { headers: { allow: 'POST' } }),
        requestId,
      );
      return;
    }
    const work = pathname.startsWith('/__sim/')
      ? answerControl(req, res, pathname, { ctx, sim, scripted })
      : serve(parts, req, res, pathname, query);
    work.catch((err: unknown) => {
      log('simulator.error', { error: err instanceof Error ? err.message : String(err), path: pathname });
      if (!res.headersSent && !res.destroyed) {
        writeReply(res, errorReply(500, 'InternalServerError', 'Simulator error', 'unknown'), 'unknown');
      }
    });
  };

  const server: Server = opts.tls
    ? createHttpsServer(
        {
          cert: opts.tls.cert,
          key: opts.tls.key,
          ...(opts.tls.ca !== undefined ? { ca: opts.tls.ca } : {}),
          requestCert: opts.tls.requestCert === true,
          rejectUnauthorized: opts.tls.requestCert === true,
        },
        onRequest,
      )
    : createHttpServer(onRequest);
  server.keepAliveTimeout = 10_000;

  await listen(server, host, opts.port);
  const port = (server.address() as AddressInfo).port;
  const url = `${opts.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closed: Promise<void> | undefined;
  const sim: Simulator = {
    url,
    port,
    stats: () => snapshot(state),
    deliveries: () => new Map(deliveryCounts(state)),
    transactions: () => state.kept.values(),
    setFaults(f) {
      checkFaults(f as Record<string, unknown>);
      applyFaults(faults, f);
      log('simulator.faults', { ...f });
    },
    reset() {
      clearState(state);
      desk.clear();
      ctx.ids = createIdSource(seed);
      parts.jitter = createIdSource(seed, 'jitter');
      log('simulator.reset', {});
    },
    close() {
      closed ??= (async () => {
        await desk.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        log('simulator.closed', {});
      })();
      return closed;
    },
  };
  log('simulator.started', { url, seed });
  return sim;
}

/** The error a request gets before any endpoint sees it (unknown path, method, token, body), or null. */
function refusal(
  wantedToken: Buffer | undefined,
  r: ReturnType<typeof route>,
  req: IncomingMessage,
  method: string,
  pathname: string,
  body: Buffer | undefined,
  requestId: string,
): Reply | null {
  if (r.route === 'notFound')
    return errorReply(404, 'NotFound', 'No such endpoint', requestId, { detail: `${method} ${pathname}` });
  if (r.route === 'methodNotAllowed')
    return errorReply(405, 'MethodNotAllowed', 'Method not allowed', requestId, {
      detail: `${method} ${pathname}; allowed: ${r.allow}`,
      headers: { allow: r.allow ?? '' },
    });
  if (wantedToken && r.route !== 'startSession' && !tokenMatches(header(req, 'authorization'), wantedToken))
    return errorReply(401, 'Unauthorized', 'Missing or invalid bearer token', requestId);
  if (method === 'POST' && body === undefined)
    return errorReply(413, 'PayloadTooLarge', 'Request body too large', requestId, {
      detail: `at most ${MAX_BODY_BYTES} bytes`,
    });
  if (method === 'POST' && !(header(req, 'content-type') ?? '').toLowerCase().includes('application/json'))
    return errorReply(415, 'HttpMediaTypeNotSupported', 'Content-Type must be application/json', requestId);
  return null;
}

/** GET /tickets/{sourceTicketId}: the ticket once its first update is out, else 404. */
function getTicket(desk: TicketDesk, req: IncomingMessage, requestId: string): Reply {
  const raw = (req.url ?? '').split('?')[0]?.slice(TICKET_PREFIX.length) ?? '';
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return validationReply(requestId, [{ field: 'sourceTicketId', message: 'not a valid URL path segment' }]);
  }
  const ticket = desk.get(id);
  return ticket
    ? { status: 200, body: ticket }
    : errorReply(404, 'TicketNotFound', 'Ticket not found', requestId, {
        detail: `no ticket with sourceTicketId "${id.slice(0, 64)}" (unknown, not created, or still being processed)`,
      });
}

/** The server listening on host:port (the simulator's default port when none is given), or a one-line error. */
async function listen(server: Server, host: string, port: number | undefined): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(
        new SvcIngestError(
          'USAGE_INVALID',
          `simulator cannot listen on ${host}:${port ?? 0}: ${err.code ?? err.message}`,
          {},
          { cause: err },
        ),
      );
    };
    server.once('error', onError);
    server.listen(port ?? DEFAULTS.port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** What a request to the service's endpoints is served with; the jitter's draws start again on a reset. */
interface ServeParts {
  ctx: EndpointDeps & TransactionsDeps;
  desk: TicketDesk;
  wantedToken: Buffer | undefined;
  /** Answers held forever (the hang fault), destroyed on close. */
  hung: Set<ServerResponse>;
  jitter: IdSource;
  scripted: ScriptedAnswers;
}

/** One request to the service's endpoints: counted, refused or dispatched, answered after the latency. */
async function serve(
  p: ServeParts,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  query: string,
): Promise<void> {
  const arrived = performance.now();
  const method = req.method ?? 'GET';
  const given = header(req, REQUEST_ID);
  const requestId = given !== undefined && given.length <= 200 ? given : p.ctx.ids.uuid();
  const r = route(method, pathname);
  const { state } = p.ctx;
  state.requests.total++;
  bump(state.requests.byPath, r.statKey);
  state.inFlight++;
  if (state.inFlight > state.maxInFlight) state.maxInFlight = state.inFlight;
  res.once('close', () => {
    state.inFlight--;
    p.hung.delete(res);
  });

  const body = await readBodyOf(req, method);
  const outcome =
    refusal(p.wantedToken, r, req, method, pathname, body, requestId) ??
    dispatch(p, r.route, req, body, query, requestId);

  // The latency counts from the request's arrival: reading and checking the body is part of it, as in a service
  // that answers in latencyMs (a simulator that added its own work on top would be slower than it claims).
  const latency =
    p.ctx.faults.latencyMs +
    (p.ctx.faults.jitterMs > 0 ? Math.floor(p.jitter.next() * (p.ctx.faults.jitterMs + 1)) : 0);
  const wait = latency - (performance.now() - arrived);
  if (wait > 0) await sleep(wait);
  if (outcome === 'reset') {
    req.socket.resetAndDestroy();
  } else if (outcome === 'hang') {
    p.hung.add(res);
  } else if (!res.destroyed) {
    bump(state.requests.byStatus, String(outcome.status));
    const scripted = [...p.scripted].find(([prefix]) => pathname.startsWith(prefix))?.[1];
    if (scripted === undefined) writeReply(res, outcome, requestId);
    else
      res
        .writeHead(scripted.status, {
          'content-type': 'application/json',
          [REQUEST_ID]: scripted.id ?? requestId,
        })
        .end(scripted.text);
  }
}

function dispatch(
  p: ServeParts,
  which: Route,
  req: IncomingMessage,
  body: Buffer | undefined,
  query: string,
  requestId: string,
): Reply | 'reset' | 'hang' {
  switch (which) {
    case 'transactions':
      return handleTransactions(p.ctx, body, requestId);
    case 'redemptions':
      return getRedemptions(p.ctx, new URLSearchParams(query), header(req, SESSION_TOKEN), requestId);
    case 'getTicket':
      return getTicket(p.desk, req, requestId);
    default: {
      const parsed = parseJson(body);
      if (!parsed.ok) return unreadableReply(requestId, 'body is not JSON');
      if (which === 'startSession') return startSession(p.ctx, parsed.value, requestId);
      if (which === 'storeLocations') return getStoreLocations(p.ctx, parsed.value, requestId);
      const result = p.desk.create(parsed.value, header(req, INSTITUTION_ID));
      if (!result && p.ctx.faults.dropTicketCreates > 0) {
        // Processed, but the answer never reaches the partner: it must resubmit (the desk takes the same create
        // again as the same ticket).
        p.ctx.faults.dropTicketCreates--;
        return 'reset';
      }
      if (!result) return { status: 202, body: { requestId } };
      return 'unreadable' in result
        ? unreadableReply(requestId, result.unreadable)
        : validationReply(requestId, result.problems);
    }
  }
}

/** The simulator's ticket desk: customers, ads and redemptions from its catalog and what it has earned since. */
function deskFor(
  opts: SimulatorOptions,
  seed: number,
  catalog: Catalog,
  state: SimState,
  log: NonNullable<SimulatorOptions['log']>,
): TicketDesk {
  return createTicketDesk({
    seed,
    delayMs: opts.ticketDelayMs ?? DEFAULTS.ticketDelayMs,
    webhookUrl: opts.webhookUrl,
    webhookSecret: opts.webhookSecret,
    now: Date.now,
    log,
    knownCustomer: (id) => catalog.customers.has(id) || state.enrolled.has(id),
    adActivation: (adId) => {
      const entry = catalog.ads.get(adId);
      return entry ? (entry.ad.activationDate ?? null) : undefined;
    },
    redemptionIdsFor: (customer, adId) =>
      [...catalog.redemptions, ...(state.earned.get(customer) ?? [])]
        .filter((r) => r.sourceCustomerId === customer && r.adId === adId)
        .map((r) => r.redemptionId),
  });
}
