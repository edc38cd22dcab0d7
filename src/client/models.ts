// Typed models of the service interface's wire: requests, responses, limits, paths and headers
// (seed/service-interface.md). The transaction itself is domain (src/model/transaction.ts).
// The simulator (src/simulator/) still imports the transaction's type and field tables from here.
export {
  REQUIRED_TRANSACTION_FIELDS,
  TRANSACTION_FIELDS,
  type TransactionField,
  type TransactionNotification,
} from '../model/transaction.ts';

/** Error body envelope (FACTS.md). */
export interface ErrorEnvelope {
  type?: string;
  title?: string;
  status?: number;
  validationErrors?: Array<{ field?: string; message?: string; [k: string]: unknown }>;
  requestId?: string;
  [k: string]: unknown;
}

export interface Image {
  url: string;
  width: number;
  height: number;
}
export interface Reward {
  rewardType: string;
  rewardAmount: number;
  minSpendAmount?: number;
  maxRewardAmount?: number;
  isMultiRedemption?: boolean;
  purchaseRequirement?: { purchaseChannels?: string[]; purchaseTypes?: string[] };
}
export interface Assets {
  logo?: { type: 'IMAGE_URL'; value: { large?: Image; small?: Image } };
  largeRectangle?: { type: 'IMAGE_URL'; value: { large?: Image; small?: Image } };
  smallRectangle?: { type: 'IMAGE_URL'; value: { small?: Image } };
  copy?: { type: 'AD_COPY'; value: Record<string, string> };
  callsToAction?: {
    type: 'CALL_TO_ACTION_LINKS';
    value: Record<string, { type: 'WEB_LINK'; value: string }>;
  };
  [k: string]: unknown;
}
export interface Ad {
  adId: string;
  adType: string;
  adServeToken?: string;
  activationDate?: string;
  merchantName: string;
  reward: Reward;
  activationState?: string;
  visibilityState?: string;
  redemptionState?: string;
  assets?: Assets;
}
export interface Redemption {
  redemptionId: string;
  adId: string;
  amount: number;
  redemptionDate: string;
  sourceCustomerId: string;
  sourceAccountId: string;
  redeemingTransactionAmount: number;
  transactionId: string;
  rewardSettlementRunDate?: string;
}
export interface RedemptionsResponse {
  redemptions: Redemption[];
  ads: Record<string, Ad>;
  requestId: string;
}

/** Store-location address members (FACTS.md). */
export interface StoreAddress {
  addressLine1?: string;
  addressLine2?: string;
  city?: string;
  state?: string;
  postalCode?: string;
  country?: string;
}
export interface StoreLocation {
  storeName: string;
  address: StoreAddress;
  phoneNumber?: string;
  distance: number;
  latitude: number;
  longitude: number;
}
export interface CustomerLocation {
  latlong?: { latitude: number; longitude: number };
  postalCode?: string;
}
export interface StoreLocationsRequest {
  adIds: string[];
  customerLocation: CustomerLocation;
  storeLocationRadiusInMeters: number;
}
export interface StoreLocationsResponse {
  adStoreLocations: Record<string, StoreLocation[]>;
  requestId?: string;
}

export type TicketStatus = 'In Process' | 'Closed';
export const RESOLUTION_TYPES = [
  'No Credit: Not eligible for reward',
  'No Credit: Reward Pending',
  'No Credit: Reward Received',
] as const;

export interface CreateTicketRequest {
  authorEmailAddress?: string;
  sourceTicketId: string;
  sourceCustomerId: string | number;
  transactionIds: number[];
  offerId: number;
  description: string;
}
export interface Ticket {
  authorEmailAddress?: string;
  svcTicketId: number;
  sourceTicketId: string;
  sourceCustomerId: string | number;
  status: TicketStatus | string;
  activationDate?: string;
  description: string;
  resolutionType?: string;
  svcResponse?: string;
  offerId: number;
  transactionIds: number[];
  redemptionIds?: unknown[];
  ticketCreatedDate: string;
  ticketSolvedDate?: string;
}
export interface TicketWebhookUpdate {
  authorEmailAddress?: string;
  svcTicketId?: number;
  sourceTicketId: string;
  sourceCustomerId: string | number;
  status?: TicketStatus | string;
  processingStatus: 'Success' | 'Error' | string;
  processingStatusMessage?: string;
  description?: string;
  resolutionType?: string;
  svcResponse?: string;
  offerId?: number;
  transactionIds?: number[];
  institutionId?: string;
}

export interface StartSessionResponse {
  sessionToken: string;
}

/** Limits of the interface, checked on both sides (client and simulator). */
export const LIMITS = {
  lookbackMin: 0,
  lookbackMax: 396,
  lookbackDefaultDays: 120,
  storeRadiusMaxMeters: 48_000,
  ticketTransactionIdsMax: 10,
  transactionsPerRequestMax: 50,
} as const;

/** Paths of the service's endpoints, relative to the base URL. */
export const PATHS = {
  redemptions: '/v2/customerProfile/getCustomerAdRedemptions',
  storeLocations: '/v2/ads/getstorelocations',
  tickets: '/csaapi/v2/tickets',
  transactions: '/v2/data/transactions',
  startSession: '/v2/session/startSession',
} as const;

export const REQUEST_ID_HEADER = 'X-SVC-Request-Id';
export const SESSION_TOKEN_HEADER = 'X-SVC-Session-Token';
export const INSTITUTION_ID_HEADER = 'X-SVC-Institution-Id';
