// Handlers of startSession, getCustomerAdRedemptions and getstorelocations: pure functions of request and state.

import type { Ad, Redemption, StoreLocation } from '../client/models.ts';
import { LIMITS } from '../client/models.ts';
import type { Catalog } from './catalog.ts';
import { haversineMeters, POSTAL_CODES } from './catalog.ts';
import type { FieldProblem, Reply } from './http.ts';
import { errorReply, isObject, typeOf, unreadableReply, validationReply } from './http.ts';
import type { IdSource } from './rng.ts';
import type { SessionClaims } from './session.ts';
import { isProblem, mintToken, verifyToken } from './session.ts';
import type { SimState } from './state.ts';
import { knownCustomer } from './state.ts';

const DAY_MS = 86_400_000;
const INTEGER = /^(0|[1-9]\d{0,8})$/;

export interface EndpointDeps {
  state: SimState;
  catalog: Catalog;
  secret: Buffer;
  ids: IdSource;
  sessionTtlMs: number;
  now(): number;
}

/** POST /v2/session/startSession */
export function startSession(d: EndpointDeps, body: unknown, requestId: string): Reply {
  if (!isObject(body)) return unreadableReply(requestId, `body: expected an object, got ${typeOf(body)}`);
  const problems: FieldProblem[] = [];
  const { sourceCustomerId, scopes, organizationId } = body;
  for (const key of Object.keys(body)) {
    if (key !== 'sourceCustomerId' && key !== 'scopes' && key !== 'organizationId') {
      problems.push({ field: key, message: 'unknown field' });
    }
  }
  if (typeof sourceCustomerId !== 'string' || sourceCustomerId.length === 0) {
    problems.push({
      field: 'sourceCustomerId',
      message: `expected a non-empty string, got ${typeOf(sourceCustomerId)}`,
    });
  }
  if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string')) {
    problems.push({ field: 'scopes', message: `expected an array of strings, got ${typeOf(scopes)}` });
  }
  if (typeof organizationId !== 'string' || organizationId.length === 0) {
    problems.push({
      field: 'organizationId',
      message: `expected a non-empty string, got ${typeOf(organizationId)}`,
    });
  }
  if (problems.length > 0) return validationReply(requestId, problems);
  const customer = sourceCustomerId as string;
  if (!knownCustomer(d.state, d.catalog, customer)) {
    return validationReply(
      requestId,
      [{ field: 'sourceCustomerId', message: 'customer is not enrolled or has no accounts' }],
      'Customer not enrolled',
    );
  }
  const iat = d.now();
  const claims: SessionClaims = {
    sourceCustomerId: customer,
    organizationId: organizationId as string,
    sessionId: d.ids.uuid(),
    scopes: scopes as string[],
    iat,
    exp: iat + d.sessionTtlMs,
  };
  return { status: 200, body: { sessionToken: mintToken(d.secret, claims), requestId } };
}

/** GET /v2/customerProfile/getCustomerAdRedemptions */
export function getRedemptions(
  d: EndpointDeps,
  query: URLSearchParams,
  token: string | undefined,
  requestId: string,
): Reply {
  const claims = verifyToken(d.secret, token, d.now());
  if (isProblem(claims)) {
    return errorReply(401, 'SessionValidationException', claims.title, requestId, { detail: claims.detail });
  }
  let days: number = LIMITS.lookbackDefaultDays;
  const values = query.getAll('lookbackWindowInDays');
  if (values.length > 1) {
    return validationReply(requestId, [{ field: 'lookbackWindowInDays', message: 'given more than once' }]);
  }
  const raw = values[0];
  if (raw !== undefined) {
    const n = INTEGER.test(raw) ? Number(raw) : Number.NaN;
    if (!(n >= LIMITS.lookbackMin && n <= LIMITS.lookbackMax)) {
      return validationReply(requestId, [
        {
          field: 'lookbackWindowInDays',
          message: `expected an integer from ${LIMITS.lookbackMin} to ${LIMITS.lookbackMax} (lookbackWindowInDays range), got "${raw.slice(0, 20)}"`,
        },
      ]);
    }
    days = n;
  }
  // An ad is in the window when its offer ended at most `days` days before the start of today (UTC), or not yet.
  const cutoff = d.catalog.anchorMs - days * DAY_MS;
  const customer = claims.sourceCustomerId;
  const ads: Record<string, Ad> = {};
  const redemptions: Redemption[] = [];
  const consider = (r: Redemption): void => {
    const entry = d.catalog.ads.get(r.adId);
    if (!entry || entry.offerEndMs < cutoff) return;
    redemptions.push(r);
    ads[r.adId] = entry.ad;
  };
  for (const r of d.catalog.redemptions) if (r.sourceCustomerId === customer) consider(r);
  for (const r of d.state.earned.get(customer) ?? []) consider(r);
  return { status: 200, body: { redemptions, ads, requestId } };
}

/** POST /v2/ads/getstorelocations */
export function getStoreLocations(d: EndpointDeps, body: unknown, requestId: string): Reply {
  if (!isObject(body)) return unreadableReply(requestId, `body: expected an object, got ${typeOf(body)}`);
  const problems: FieldProblem[] = [];
  const { adIds, customerLocation: loc, storeLocationRadiusInMeters: radius } = body;
  for (const key of Object.keys(body)) {
    if (key !== 'adIds' && key !== 'customerLocation' && key !== 'storeLocationRadiusInMeters') {
      problems.push({ field: key, message: 'unknown field' });
    }
  }
  if (
    !Array.isArray(adIds) ||
    adIds.length === 0 ||
    adIds.some((a) => typeof a !== 'string' || a.length === 0)
  ) {
    problems.push({
      field: 'adIds',
      message: `expected a non-empty array of non-empty strings, got ${typeOf(adIds)}`,
    });
  }
  if (
    !Number.isInteger(radius) ||
    (radius as number) < 1 ||
    (radius as number) > LIMITS.storeRadiusMaxMeters
  ) {
    problems.push({
      field: 'storeLocationRadiusInMeters',
      message: `expected an integer from 1 to ${LIMITS.storeRadiusMaxMeters} (storeLocationRadiusInMeters maximum), got ${typeof radius === 'number' ? radius : typeOf(radius)}`,
    });
  }
  let origin: { latitude: number; longitude: number } | undefined;
  if (!isObject(loc)) {
    problems.push({ field: 'customerLocation', message: `expected an object, got ${typeOf(loc)}` });
  } else if (loc.latlong !== undefined) {
    // latlong wins: postalCode is ignored when both are present, even an invalid one.
    const ll = loc.latlong;
    const lat = isObject(ll) ? ll.latitude : undefined;
    const lon = isObject(ll) ? ll.longitude : undefined;
    if (typeof lat !== 'number' || !(lat >= -90 && lat <= 90)) {
      problems.push({
        field: 'customerLocation.latlong.latitude',
        message: 'expected a number from -90 to 90',
      });
    }
    if (typeof lon !== 'number' || !(lon >= -180 && lon <= 180)) {
      problems.push({
        field: 'customerLocation.latlong.longitude',
        message: 'expected a number from -180 to 180',
      });
    }
    if (typeof lat === 'number' && typeof lon === 'number') origin = { latitude: lat, longitude: lon };
  } else if (loc.postalCode !== undefined) {
    const pc = loc.postalCode;
    const place = typeof pc === 'string' ? POSTAL_CODES.find((p) => p.postalCode === pc.trim()) : undefined;
    if (typeof pc !== 'string') {
      problems.push({
        field: 'customerLocation.postalCode',
        message: `expected a string, got ${typeOf(pc)}`,
      });
    } else if (!place) {
      problems.push({
        field: 'customerLocation.postalCode',
        message: `unknown postal code "${pc.slice(0, 12)}"`,
      });
    } else origin = place;
  } else {
    problems.push({ field: 'customerLocation', message: 'expected latlong or postalCode' });
  }
  if (problems.length > 0 || !origin) return validationReply(requestId, problems);
  const out: Record<string, StoreLocation[]> = {};
  for (const adId of adIds as string[]) {
    const list: StoreLocation[] = [];
    for (const s of d.catalog.ads.get(adId)?.stores ?? []) {
      const distance = haversineMeters(origin.latitude, origin.longitude, s.latitude, s.longitude);
      if (distance <= (radius as number))
        list.push({ ...s, address: { ...s.address }, distance: Math.round(distance * 10) / 10 });
    }
    list.sort((a, b) => a.distance - b.distance);
    out[adId] = list;
  }
  return { status: 200, body: { adStoreLocations: out, requestId } };
}
