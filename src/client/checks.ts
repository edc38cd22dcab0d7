// Interface limits checked before a request leaves (pure functions; SvcLimitError names the limit).
import { SvcLimitError } from './errors.ts';
import { type CreateTicketRequest, LIMITS, type StoreLocationsRequest } from './models.ts';

/** 1..50 transactions per request. */
export function checkTransactionCount(count: number): void {
  if (count < 1 || count > LIMITS.transactionsPerRequestMax) {
    throw new SvcLimitError(
      'transactionsPerRequestMax',
      `expected 1..${LIMITS.transactionsPerRequestMax} transactions per request, got ${count}`,
      'transactions',
    );
  }
}

/** lookbackWindowInDays: absent (service default 120) or an integer 0..396. */
export function checkLookback(days: number | undefined): void {
  if (days === undefined) return;
  if (!Number.isInteger(days) || days < LIMITS.lookbackMin || days > LIMITS.lookbackMax) {
    throw new SvcLimitError(
      'lookbackWindowInDays',
      `expected an integer ${LIMITS.lookbackMin}..${LIMITS.lookbackMax}, got ${days}`,
      'lookbackWindowInDays',
    );
  }
}

/** Checks a store-location request and returns the body to send (postalCode dropped when latlong is given). */
export function normalizeStoreRequest(req: StoreLocationsRequest): StoreLocationsRequest {
  if (!Array.isArray(req.adIds) || req.adIds.length === 0) {
    throw new SvcLimitError('adIds', 'expected at least one ad id', 'adIds');
  }
  if (req.adIds.some((id) => typeof id !== 'string' || id.trim() === '')) {
    throw new SvcLimitError('adIds', 'expected non-empty string ad ids', 'adIds');
  }
  const r = req.storeLocationRadiusInMeters;
  if (!Number.isInteger(r) || r < 1 || r > LIMITS.storeRadiusMaxMeters) {
    throw new SvcLimitError(
      'storeLocationRadiusInMeters',
      `expected an integer 1..${LIMITS.storeRadiusMaxMeters}, got ${r}`,
      'storeLocationRadiusInMeters',
    );
  }
  const { latlong, postalCode } = req.customerLocation ?? {};
  if (latlong) {
    const { latitude, longitude } = latlong;
    if (!Number.isFinite(latitude) || latitude < -90 || latitude > 90) {
      throw new SvcLimitError(
        'latitude',
        `expected -90..90, got ${latitude}`,
        'customerLocation.latlong.latitude',
      );
    }
    if (!Number.isFinite(longitude) || longitude < -180 || longitude > 180) {
      throw new SvcLimitError(
        'longitude',
        `expected -180..180, got ${longitude}`,
        'customerLocation.latlong.longitude',
      );
    }
    // The interface: latlong wins when both are given, so postalCode is not sent at all.
    return {
      adIds: [...req.adIds],
      customerLocation: { latlong: { latitude, longitude } },
      storeLocationRadiusInMeters: r,
    };
  }
  if (typeof postalCode !== 'string' || postalCode.trim() === '') {
    throw new SvcLimitError(
      'customerLocation',
      'expected latlong or a non-empty postalCode',
      'customerLocation',
    );
  }
  return { adIds: [...req.adIds], customerLocation: { postalCode }, storeLocationRadiusInMeters: r };
}

/** Checks a ticket before creation: required fields and at most 10 transaction ids. */
export function checkTicket(req: CreateTicketRequest): void {
  if (typeof req.sourceTicketId !== 'string' || req.sourceTicketId.trim() === '') {
    throw new SvcLimitError('sourceTicketId', 'expected a non-empty ticket id', 'sourceTicketId');
  }
  if (req.sourceCustomerId === undefined || String(req.sourceCustomerId).trim() === '') {
    throw new SvcLimitError('sourceCustomerId', 'expected a customer id', 'sourceCustomerId');
  }
  if (!Number.isInteger(req.offerId)) {
    throw new SvcLimitError('offerId', `expected an integer offer id, got ${req.offerId}`, 'offerId');
  }
  const ids = req.transactionIds;
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > LIMITS.ticketTransactionIdsMax) {
    throw new SvcLimitError(
      'ticketTransactionIdsMax',
      `expected 1..${LIMITS.ticketTransactionIdsMax} transaction ids per ticket, got ${Array.isArray(ids) ? ids.length : 0}`,
      'transactionIds',
    );
  }
  if (ids.some((id) => !Number.isInteger(id))) {
    throw new SvcLimitError('transactionIds', 'expected integer transaction ids', 'transactionIds');
  }
  if (typeof req.description !== 'string' || req.description.trim() === '') {
    throw new SvcLimitError('description', 'expected a non-empty description', 'description');
  }
}
