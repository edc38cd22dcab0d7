// The embedded simulator of the whole service (seed/service-interface.md) on loopback: public API and its choices.
//
// Choices where the interface is silent (copied into the README):
// - Faults (reset, hang, 429, poison, failFirst, failRate, in that order) apply to POST /v2/data/transactions only;
//   latency and jitter apply to every service endpoint, counted from the request's arrival (the simulator's own
//   reading and checking are inside it, as in a service that answers in that time). reset, hang and 429 come before validation (transport and
//   rate-limiter level); poison, failFirst and failRate come after it, so an invalid batch always gets its 400.
// - Fault draws are keyed by (seed, batch identity, attempt number of that batch): a seed gives the same faults
//   whatever the interleaving of concurrent batches. Batch identity = sha1 of the sorted transactionIds.
//   failFirst counts the attempts that reach its stage, so faults.failFirst = K x distinct valid batches.
// - Ids: request ids, session ids and ticket ids come from seeded sequences; a request's own X-SVC-Request-Id
//   (up to 200 characters) is echoed in the body and the header. svcTicketId counts up from 500001.
// - Transactions: body {transactions:[1..50]} and nothing else; each item may hold only the interface's fields,
//   with their JSON types; required = FACTS.md list; amounts are strings of integer minor units, at most 15
//   digits, no leading zeros, positive (cash back may be "0"); timestamps YYYY-MM-DDTHH:mm:ss.sssZ naming a real
//   instant; MCC 4 digits; country ISO 3166 alpha-2; state 2-3 capital letters; currencyCode ISO 4217 alpha-3;
//   iin 6-8 digits; last4 4 digits; cardNetworkIdentifier an integer 0..9; a transactionId repeated inside one
//   request is refused. All problems of a request are reported at once (ValidationException). Digit runs of 12+
//   in echoed values are replaced by # so a misplaced card number is never sent back.
// - POST bodies must be application/json (else 415) and at most 5 MiB (else 413). Unknown path 404, wrong method
//   405 with Allow. Every error body is {type, title, status, detail?, validationErrors?, requestId}.
// - Sessions: startSession needs sourceCustomerId (a seeded or enrolled customer, else 400 "Customer not
//   enrolled"), scopes (array of strings, may be empty) and organizationId (non-empty). The token is
//   base64url(header).base64url(payload).HS256 with a per-seed secret; payload {sourceCustomerId, organizationId,
//   sessionId, scopes, iat, exp}, iat/exp in epoch milliseconds. A missing, malformed or forged token gets 401
//   "Invalid session token"; an expired one 401 "Session Expired".
// - Data: customers cust-0001..cust-0040 (accounts acct-0001..) and the customers of samples/ (SAMPLE_CUSTOMERS, with
//   SAMPLE_REDEMPTIONS on sample transactions: paid, pending and one unmatched; docs/support.md), 24 ads numbered 100001.. (numeric, since tickets
//   name an ad as the number offerId), 0..5 seeded redemptions per customer, 8 stores per ad around a fixed table
//   of 8 US postal codes (10001, 02134, 60601, 85004, 94105, 98101, 73301, 33131). Dates are relative to midnight
//   UTC of the start day, so a seed gives the same data all day. Every third ad is still running (its offer ends
//   10..120 days ahead); the others ended 1..400 days ago.
// - Lookback rule: an ad (with its redemptions) is returned when its offer end date is on or after
//   (start of today UTC - lookbackWindowInDays days); running ads are always in. Default 120; the parameter must
//   be a plain integer 0..396 given once, else 400.
// - Earned redemptions: an accepted transaction whose id has FNV-1a-32 hash = 0 mod 10 (see earnsRedemption)
//   earns one redemption for its customer on a running ad (amount = percent of postedAmount/100, capped;
//   redemptionDate = its posting timestamp; rewardSettlementRunDate a week after the day it arrived, so pending
//   until then), unless a seeded redemption names it. A transaction from an unseeded customer enrols that customer.
// - Store locations: latlong wins (postalCode ignored, even invalid); an unknown postal code is a 400; an unknown
//   adId gets an empty list; distance = haversine meters rounded to 0.1 m; sorted nearest first; unknown fields 400.
// - Tickets: body types checked (unknown fields 400) then 202. After ticketDelayMs the first update: Error for no
//   or more than 10 transactionIds, a transactionId that is not a positive integer, an unknown customer, an
//   unknown offerId (no ad with that number), or a sourceTicketId that already exists with another content (Error
//   tickets are not kept, so a corrected ticket can be resubmitted; the same create again is the same ticket: 202,
//   no second lifecycle). dropTicketCreates K: the first K creates are taken but their answer is lost (reset). Otherwise Success/In Process, and after another
//   ticketDelayMs Closed with a resolutionType drawn from the seed and the ticket id, a matching svcResponse and
//   the customer's redemptionIds for that offer. A description shorter than 10 characters is "too little
//   information": Closed with a blank resolutionType. Retrieval is 404 until the first update, then shows In
//   Process, then Closed with ticketSolvedDate. Error updates echo institutionId from X-SVC-Institution-Id (or
//   "sim-institution"). A webhook is POSTed once (10 s timeout, no retries); without webhookUrl the lifecycle
//   still runs.
// - requireToken: `Authorization: Bearer <token>` on every endpoint except startSession and /__sim/* (the simulate
//   command takes it from env SVC_SIM_TOKEN with --require-token, never from argv; off loopback needs --allow-remote).
// - HEAD /v2/data/transactions (svc-ingest send's connection check) is answered 405 (Allow: POST) and counted as
//   requests.preflight only, outside total, byPath and byStatus, before auth, faults and latency.
// - webhookSecret (the simulate command: env SVC_SIM_WEBHOOK_SECRET): each webhook POST carries X-SVC-Timestamp
//   (Unix seconds) and X-SVC-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">; redirects are not followed.
// - Stats count service requests only (not /__sim/*); byPath collapses ticket ids to {sourceTicketId};
//   byStatus counts answered statuses (resets and hangs are only in faults). largestBatch is the longest
//   transactions array seen in a parsable body, accepted or not.
// - transactions() keeps the first keepTransactions (default 100,000) accepted transactions whole; deliveries
//   are counted without limit. reset() forgets deliveries, stats, tickets, enrolments, earned redemptions and
//   attempt counters, and restarts the id sequences; the fault settings stay.
// - /__sim/* is outside auth, faults, latency and stats. GET /__sim/stats answers the bare SimulatorStats (no
//   requestId member); POST /__sim/faults answers the fault settings now in force, 400 for an unknown key or a
//   value out of range; POST /__sim/reset answers {reset: true}. Test-only: POST /__sim/answers {path, body,
//   status?, id?} makes every request whose path starts with `path` get `body` as written (a service's answer
//   holding card numbers, 19-digit JSON numbers), its request id header `id`; body null takes it back; reset too.
// - Additions to the brief's API: options keepTransactions and log(event, fields); exports earnsRedemption,
//   batchIdentity, haversineMeters, POSTAL_CODES, SEEDED_CUSTOMERS (tests compute expectations from them).

export { haversineMeters, POSTAL_CODES, SEEDED_CUSTOMERS } from './catalog.ts';
export type { FaultOptions, SimulatorOptions } from './options.ts';
export type { Simulator } from './server.ts';
export { startSimulator } from './server.ts';
export type { SimulatorStats } from './state.ts';
export { earnsRedemption } from './state.ts';
export { batchIdentity } from './transactions.ts';
