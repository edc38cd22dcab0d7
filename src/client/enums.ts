// Known enumeration values (interface + FACTS.md); unknown ones in responses are kept and warned about once.
import type { Logger } from '../log.ts';
import { RESOLUTION_TYPES, type RedemptionsResponse, type Ticket } from './models.ts';

/** Values seen in the service's published schema; anything else is kept and logged as a warning. */
export const KNOWN_ENUMS = {
  adType: ['CASH_BACK_OFFER'],
  activationState: ['NEW', 'SERVED', 'ACTIVATED'],
  visibilityState: ['VISIBLE', 'PARKED'],
  redemptionState: ['PROCESSING', 'FULLY_REDEEMED'],
  rewardType: ['PERCENT', 'FIXED', 'METERED_AMOUNT_PURCHASE', 'PERCENT_AMOUNT_PURCHASE'],
  purchaseChannels: ['InStore', 'Online', 'PayAtPump', 'App', 'Convenience'],
  purchaseTypes: ['Membership', 'Subscription', 'Fuel'],
  ticketStatus: ['In Process', 'Closed'],
  resolutionType: [...RESOLUTION_TYPES, ''],
} as const satisfies Record<string, readonly string[]>;

export type EnumField = keyof typeof KNOWN_ENUMS;

/** Warns (once per field and value, per warner) about values outside KNOWN_ENUMS. */
export function createEnumWarner(logger?: Logger): (field: EnumField, value: unknown, where: string) => void {
  const seen = new Set<string>();
  return (field, value, where) => {
    if (value === undefined || value === null) return;
    if ((KNOWN_ENUMS[field] as readonly unknown[]).includes(value)) return;
    const key = `${field}\u0000${String(value)}`;
    if (seen.has(key)) return;
    seen.add(key);
    logger?.warn({ field, value, where }, 'response.unknown_enum');
  };
}

/** Checks every enum-valued member of a redemptions answer. */
export function warnRedemptionEnums(
  res: RedemptionsResponse,
  warn: ReturnType<typeof createEnumWarner>,
): void {
  for (const ad of Object.values(res.ads ?? {})) {
    const where = `ads.${ad?.adId}`;
    warn('adType', ad?.adType, where);
    warn('activationState', ad?.activationState, where);
    warn('visibilityState', ad?.visibilityState, where);
    warn('redemptionState', ad?.redemptionState, where);
    warn('rewardType', ad?.reward?.rewardType, where);
    for (const c of ad?.reward?.purchaseRequirement?.purchaseChannels ?? [])
      warn('purchaseChannels', c, where);
    for (const t of ad?.reward?.purchaseRequirement?.purchaseTypes ?? []) warn('purchaseTypes', t, where);
  }
}

/** Checks status and resolutionType of a ticket (or a webhook update). */
export function warnTicketEnums(
  t: Pick<Ticket, 'status' | 'resolutionType' | 'sourceTicketId'>,
  warn: ReturnType<typeof createEnumWarner>,
): void {
  warn('ticketStatus', t.status, `ticket ${t.sourceTicketId}`);
  warn('resolutionType', t.resolutionType, `ticket ${t.sourceTicketId}`);
}
