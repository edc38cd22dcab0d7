// The lookups of the service's client: redemptions (through a customer's session, started again once on a 401),
// store locations, tickets; and the session provider the configuration names.

import { checkHeaderValue } from '../config/secret.ts';
import type { Config } from '../config/types.ts';
import type { Logger } from '../log.ts';
import { type Answer, type Call, expectOk, isObject } from './answer.ts';
import { checkLookback, checkTicket, normalizeStoreRequest } from './checks.ts';
import { type createEnumWarner, warnRedemptionEnums, warnTicketEnums } from './enums.ts';
import { SvcHttpError } from './errors.ts';
import {
  type CreateTicketRequest,
  PATHS,
  type RedemptionsResponse,
  SESSION_TOKEN_HEADER,
  type StartSessionResponse,
  type StoreLocationsRequest,
  type StoreLocationsResponse,
  type Ticket,
} from './models.ts';
import { commandProvider, type SessionCache, type SessionProvider, staticProvider } from './session.ts';

/** The client's lookups (part of SvcClient). */
export interface ServiceLookups {
  getRedemptions(
    sourceCustomerId: string,
    opts?: { lookbackWindowInDays?: number; requestId?: string },
  ): Promise<RedemptionsResponse>;
  getStoreLocations(
    req: StoreLocationsRequest,
    opts?: { requestId?: string },
  ): Promise<StoreLocationsResponse>;
  createTicket(
    req: CreateTicketRequest,
    opts?: { requestId?: string },
  ): Promise<{ requestId?: string; httpStatus: number }>;
  getTicket(sourceTicketId: string, opts?: { requestId?: string }): Promise<Ticket>;
}

/** Where a customer's session token comes from: the configuration's static token or command, or startSession. */
export function sessionProvider(config: Config, call: (c: Call) => Promise<Answer>): SessionProvider {
  return config.session.provider === 'static'
    ? staticProvider(config)
    : config.session.provider === 'command'
      ? commandProvider(config.session.command ?? '', config.timeoutMs, config.session.commandEnv)
      : {
          kind: 'startSession',
          async start(sourceCustomerId) {
            const a = await call({
              method: 'POST',
              path: PATHS.startSession,
              guard: false,
              json: {
                sourceCustomerId,
                scopes: config.session.scopes,
                organizationId: config.session.organizationId,
              },
            });
            expectOk(a, [200, 201], (b) =>
              isObject(b) && typeof b.sessionToken === 'string' && b.sessionToken !== ''
                ? undefined
                : 'no sessionToken in the answer',
            );
            const token = (a.body as StartSessionResponse).sessionToken;
            checkHeaderValue(token, 'the session token answered by startSession', 'SEND_SESSION');
            return token;
          },
        };
}

/** GET redemptions, POST store locations, POST and GET tickets. */
export function lookupCalls(
  call: (c: Call) => Promise<Answer>,
  sessions: SessionCache,
  warn: ReturnType<typeof createEnumWarner>,
  logger: Logger | undefined,
): ServiceLookups {
  return {
    async getRedemptions(sourceCustomerId, o = {}) {
      checkLookback(o.lookbackWindowInDays);
      const attempt = async (sessionToken: string): Promise<Answer> =>
        call({
          method: 'GET',
          path: PATHS.redemptions,
          headers: { [SESSION_TOKEN_HEADER]: sessionToken },
          ...(o.requestId ? { requestId: o.requestId } : {}),
          ...(o.lookbackWindowInDays !== undefined
            ? { searchParams: { lookbackWindowInDays: o.lookbackWindowInDays } }
            : {}),
        });
      let a: Answer;
      try {
        a = await attempt(await sessions.get(sourceCustomerId));
      } catch (err) {
        if (!(err instanceof SvcHttpError && err.status === 401)) throw err;
        // The one retry the client does: an expired session gets a new one (FACTS.md).
        logger?.info({ requestId: err.requestId }, 'session.expired');
        sessions.drop(sourceCustomerId);
        a = await attempt(await sessions.renew(sourceCustomerId));
      }
      expectOk(a, [200], (b) =>
        isObject(b) && Array.isArray(b.redemptions) ? undefined : 'no redemptions array in the answer',
      );
      const res = a.body as RedemptionsResponse;
      res.ads = isObject(res.ads) ? res.ads : {};
      warnRedemptionEnums(res, warn);
      return res;
    },

    async getStoreLocations(req, o = {}) {
      const body = normalizeStoreRequest(req);
      const a = await call({
        method: 'POST',
        path: PATHS.storeLocations,
        json: body,
        ...(o.requestId ? { requestId: o.requestId } : {}),
      });
      expectOk(a, [200], (b) =>
        isObject(b) && isObject(b.adStoreLocations) ? undefined : 'no adStoreLocations in the answer',
      );
      return a.body as StoreLocationsResponse;
    },

    async createTicket(req, o = {}) {
      checkTicket(req);
      const a = await call({
        method: 'POST',
        path: PATHS.tickets,
        json: req,
        ...(o.requestId ? { requestId: o.requestId } : {}),
      });
      expectOk(a, [200, 201, 202]);
      return { requestId: a.requestId, httpStatus: a.status };
    },

    async getTicket(sourceTicketId, o = {}) {
      if (sourceTicketId.trim() === '') checkTicket({ sourceTicketId } as CreateTicketRequest);
      const a = await call({
        method: 'GET',
        path: `${PATHS.tickets}/${encodeURIComponent(sourceTicketId)}`,
        ...(o.requestId ? { requestId: o.requestId } : {}),
      });
      expectOk(a, [200], (b) =>
        isObject(b) && 'sourceTicketId' in b ? undefined : 'no ticket in the answer',
      );
      const ticket = a.body as Ticket;
      warnTicketEnums(ticket, warn);
      return ticket;
    },
  };
}
