// Seeded fixture data of the simulated service: customers, ads with offer end dates, redemptions, stores.
import type { Ad, Redemption, StoreLocation } from '../client/models.ts';
import type { Prng } from './rng.ts';
import { createPrng } from './rng.ts';

const DAY_MS = 86_400_000;

/** Seeded customers are cust-0001 … cust-NNNN. */
export const SEEDED_CUSTOMERS = 40;
/** Ads are numbered from 100001 (numeric strings, since tickets name an ad as a number `offerId`). */
export const SEEDED_ADS = 24;
export const FIRST_AD_ID = 100_001;
/** Stores generated per ad. */
export const STORES_PER_AD = 8;

/**
 * A postal code the store-location endpoint can resolve (fixed table, the same for every seed).
 * @example { postalCode: '10001', latitude: 40.7506, longitude: -73.9972, city: 'New York', state: 'NY' }
 */
export interface PostalPlace {
  postalCode: string;
  latitude: number;
  longitude: number;
  city: string;
  state: string;
}

export const POSTAL_CODES: readonly PostalPlace[] = [
  { postalCode: '10001', latitude: 40.7506, longitude: -73.9972, city: 'New York', state: 'NY' },
  { postalCode: '02134', latitude: 42.3539, longitude: -71.1337, city: 'Boston', state: 'MA' },
  { postalCode: '60601', latitude: 41.8858, longitude: -87.6181, city: 'Chicago', state: 'IL' },
  { postalCode: '85004', latitude: 33.4515, longitude: -112.0685, city: 'Phoenix', state: 'AZ' },
  { postalCode: '94105', latitude: 37.7898, longitude: -122.3942, city: 'San Francisco', state: 'CA' },
  { postalCode: '98101', latitude: 47.6114, longitude: -122.3305, city: 'Seattle', state: 'WA' },
  { postalCode: '73301', latitude: 30.2672, longitude: -97.7431, city: 'Austin', state: 'TX' },
  { postalCode: '33131', latitude: 25.7667, longitude: -80.1918, city: 'Miami', state: 'FL' },
];

/**
 * One ad of the catalog: the wire Ad plus the offer end date the lookback filter uses (never sent).
 * @example { ad: { adId: '100001', … }, offerEndMs: 1767225600000 }
 */
export interface CatalogAd {
  ad: Ad;
  offerEndMs: number;
  stores: StoreLocation[];
}

/**
 * Everything seeded for one simulator: a pure function of (seed, anchor day).
 * @example const c = buildCatalog(1, Date.UTC(2026, 10, 21)); c.ads.get('100001')?.offerEndMs
 */
export interface Catalog {
  anchorMs: number;
  ads: Map<string, CatalogAd>;
  /** Ads whose offer has not ended at the anchor day (earned redemptions use these). */
  ongoingAdIds: string[];
  customers: Map<string, { sourceAccountId: string }>;
  redemptions: Redemption[];
  /** transactionIds the seeded redemptions name (such a transaction earns nothing more when it arrives). */
  seededTransactionIds: Set<string>;
}

/**
 * The customers of the files in samples/ (as their mapping profiles read them), enrolled from the start with the
 * account each sample gives them, so reconcile and trace work on a fresh simulator.
 */
export const SAMPLE_CUSTOMERS: ReadonlyArray<readonly [customer: string, account: string]> = [
  ...range(0, 6).map((i) => [`cust-${1000 + i}`, `acct-${5000 + i}`] as const),
  ...range(0, 10).map((i) => [`C${70000 + i}`, `A${880000 + i}`] as const),
  ...range(0, 5).map((i) => [`hb-cust-${200 + i}`, `hb-acct-${9000 + i}`] as const),
  ...range(0, 2).map((i) => [`ich_1SmplHold000${i}`, `ic_1SmplCard000${i}`] as const),
  ...range(0, 2).map((i) => [`acct-000${i}-5f2e`, `acct-000${i}-5f2e`] as const),
];

/**
 * Redemptions seeded for sample transactions, all on ad 100001 (Blue Bottle Coffee, a running offer):
 * paid ones (settlement run a week after posting, long past), pending ones (settlement run `settleInDays` after
 * the simulator's start day) and one whose transaction no sample holds (unmatched in any ledger of the samples).
 */
export const SAMPLE_REDEMPTIONS: ReadonlyArray<{
  customer: string;
  account: string;
  transactionId: string;
  spendMinor: number;
  postedAt: string;
  /** Days after the start day when the reward is paid; absent: paid a week after posting. */
  settleInDays?: number;
}> = [
  {
    customer: 'cust-1000',
    account: 'acct-5000',
    transactionId: 'can-csv-0001',
    spendMinor: 10761,
    postedAt: '2025-10-02T06:00:00.000Z',
  },
  {
    customer: 'cust-1000',
    account: 'acct-5000',
    transactionId: 'can-nd-0001',
    spendMinor: 17867,
    postedAt: '2025-10-02T06:00:00.000Z',
  },
  {
    customer: 'cust-1000',
    account: 'acct-5000',
    transactionId: 'pos-2025-0999',
    spendMinor: 4200,
    postedAt: '2025-10-05T06:00:00.000Z',
  },
  {
    customer: 'C70000',
    account: 'A880000',
    transactionId: 'NW20251000',
    spendMinor: 34518,
    postedAt: '2025-10-02T10:30:00.000Z',
  },
  {
    customer: 'C70000',
    account: 'A880000',
    transactionId: 'NW20251011',
    spendMinor: 20660,
    postedAt: '2025-10-13T10:30:00.000Z',
    settleInDays: 5,
  },
  {
    customer: 'hb-cust-200',
    account: 'hb-acct-9000',
    transactionId: 'hb-57f73a6f946b5b38de43fdd430a2578c',
    spendMinor: 2031,
    postedAt: '2025-10-02T02:00:00.000Z',
  },
  {
    customer: 'ich_1SmplHold0001',
    account: 'ic_1SmplCard0001',
    transactionId: 'ipi_1SmplTx000001',
    spendMinor: 1250,
    postedAt: '2025-10-01T15:00:00.000Z',
    settleInDays: 3,
  },
];

/** The ad every sample redemption is on. */
export const SAMPLE_REDEMPTION_AD = String(FIRST_AD_ID);

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function sampleRedemptions(ads: Map<string, CatalogAd>, anchorMs: number): Redemption[] {
  const ad = ads.get(SAMPLE_REDEMPTION_AD)?.ad;
  if (!ad) return [];
  return SAMPLE_REDEMPTIONS.map((s, i) => {
    const posted = Date.parse(s.postedAt);
    const settle =
      s.settleInDays === undefined ? anchorDay(posted) + 7 * DAY_MS : anchorMs + s.settleInDays * DAY_MS;
    return {
      redemptionId: `rdm-sample-${String(i + 1).padStart(2, '0')}`,
      adId: SAMPLE_REDEMPTION_AD,
      amount: rewardFor(ad, s.spendMinor / 100),
      redemptionDate: s.postedAt,
      sourceCustomerId: s.customer,
      sourceAccountId: s.account,
      redeemingTransactionAmount: s.spendMinor / 100,
      transactionId: s.transactionId,
      rewardSettlementRunDate: new Date(settle).toISOString(),
    };
  });
}

const MERCHANTS = [
  'Blue Bottle Coffee',
  'Harbor Freight',
  'Juniper Books',
  'Northwind Grocers',
  'Pinecrest Pharmacy',
  'Redwood Outfitters',
  'Saguaro Fuel',
  'Tidewater Pets',
  'Urban Greens',
  'Vista Cinemas',
  'Willow Home',
  'Zephyr Bikes',
];
const STREETS = ['Main St', 'Oak Ave', 'Market St', 'Elm St', 'Broadway', 'Cedar Rd', 'Lake Dr', 'Pine St'];
const CHANNELS = ['InStore', 'Online'];

/** Midnight UTC of the day holding `ms`: catalog dates are relative to it, so a seed gives the same data all day. */
export function anchorDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

export function buildCatalog(seed: number, anchorMs: number): Catalog {
  const rnd = createPrng(seed);
  const ads = new Map<string, CatalogAd>();
  const ongoingAdIds: string[] = [];
  for (let i = 0; i < SEEDED_ADS; i++) {
    const adId = String(FIRST_AD_ID + i);
    // Every third ad is still running (ends 10..120 days ahead); the others ended 1..400 days ago.
    const offset = i % 3 === 0 ? between(rnd, 10, 120) : -between(rnd, 1, 400);
    const offerEndMs = anchorMs + offset * DAY_MS;
    const merchantName = MERCHANTS[i % MERCHANTS.length] as string;
    const ad = makeAd(rnd, adId, merchantName, offerEndMs, seed);
    ads.set(adId, { ad, offerEndMs, stores: makeStores(rnd, merchantName) });
    if (offset > 0) ongoingAdIds.push(adId);
  }
  const customers = new Map<string, { sourceAccountId: string }>();
  const redemptions: Redemption[] = [];
  const adIds = [...ads.keys()];
  for (let c = 1; c <= SEEDED_CUSTOMERS; c++) {
    const n = String(c).padStart(4, '0');
    const sourceCustomerId = `cust-${n}`;
    const sourceAccountId = `acct-${n}`;
    customers.set(sourceCustomerId, { sourceAccountId });
    const count = Math.floor(rnd() * 6);
    for (let k = 0; k < count; k++) {
      const adId = adIds[Math.floor(rnd() * adIds.length)] as string;
      const entry = ads.get(adId) as CatalogAd;
      const redeemedMs = Math.min(entry.offerEndMs, anchorMs) - between(rnd, 1, 60) * DAY_MS;
      const spend = between(rnd, 1_000, 30_000) / 100;
      redemptions.push({
        redemptionId: `rdm-${n}-${k + 1}`,
        adId,
        amount: rewardFor(entry.ad, spend),
        redemptionDate: new Date(redeemedMs + between(rnd, 0, DAY_MS - 1)).toISOString(),
        sourceCustomerId,
        sourceAccountId,
        redeemingTransactionAmount: spend,
        transactionId: `sim-${n}-${k + 1}`,
        rewardSettlementRunDate: new Date(anchorDay(redeemedMs) + 7 * DAY_MS).toISOString(),
      });
    }
  }
  for (const [customer, account] of SAMPLE_CUSTOMERS) customers.set(customer, { sourceAccountId: account });
  redemptions.push(...sampleRedemptions(ads, anchorMs));
  const seededTransactionIds = new Set(redemptions.map((r) => r.transactionId));
  return { anchorMs, ads, ongoingAdIds, customers, redemptions, seededTransactionIds };
}

/** Reward of an ad for a purchase: percent of the spend, capped, in currency units with 2 decimals. */
export function rewardFor(ad: Ad, spend: number): number {
  const max = ad.reward.maxRewardAmount ?? Number.POSITIVE_INFINITY;
  return Math.round(Math.min(max, (spend * ad.reward.rewardAmount) / 100) * 100) / 100;
}

function between(rnd: Prng, lo: number, hi: number): number {
  return lo + Math.floor(rnd() * (hi - lo + 1));
}

function image(adId: string, name: string, width: number, height: number) {
  return { url: `https://cdn.svc-sim.invalid/ads/${adId}/${name}.png`, width, height };
}

function makeAd(rnd: Prng, adId: string, merchantName: string, offerEndMs: number, seed: number): Ad {
  const rate = between(rnd, 2, 15);
  const minSpend = between(rnd, 0, 5) * 5;
  const maxReward = between(rnd, 5, 50);
  const channels = rnd() < 0.5 ? [...CHANNELS] : [CHANNELS[Math.floor(rnd() * 2)] as string];
  const activatedMs = offerEndMs - between(rnd, 30, 180) * 86_400_000;
  const token = Buffer.from(JSON.stringify({ adId, seed, v: 1 })).toString('base64url');
  return {
    adId,
    adType: 'CASH_BACK_OFFER',
    adServeToken: token,
    activationDate: new Date(activatedMs).toISOString(),
    merchantName,
    reward: {
      rewardType: 'PERCENT_AMOUNT_PURCHASE',
      rewardAmount: rate,
      minSpendAmount: minSpend,
      maxRewardAmount: maxReward,
      isMultiRedemption: rnd() < 0.5,
      purchaseRequirement: { purchaseChannels: channels, purchaseTypes: [] },
    },
    activationState: 'ACTIVATED',
    visibilityState: 'VISIBLE',
    redemptionState: 'PROCESSING',
    assets: {
      logo: {
        type: 'IMAGE_URL',
        value: { large: image(adId, 'logo-large', 256, 256), small: image(adId, 'logo-small', 64, 64) },
      },
      largeRectangle: {
        type: 'IMAGE_URL',
        value: { large: image(adId, 'rect-large', 1200, 628), small: image(adId, 'rect-small', 600, 314) },
      },
      smallRectangle: { type: 'IMAGE_URL', value: { small: image(adId, 'rect-small-only', 300, 157) } },
      copy: {
        type: 'AD_COPY',
        value: {
          headline: `${rate}% cash back at ${merchantName}`,
          subheadline: `Up to $${maxReward} back`,
          shortPreMessage: 'Activate to earn',
          thankYouMessage: `Thanks for shopping at ${merchantName}!`,
          marketingCopy: `Shop at <b>${merchantName}</b> and get ${rate}% back.`,
          rewardCopy: `${rate}% back, up to $${maxReward}`,
          preMessage: minSpend > 0 ? `Spend $${minSpend} or more` : 'Any purchase qualifies',
          postMessage: 'Your reward is on its way.',
          termsAndConditions: `<p>Offer ends ${new Date(offerEndMs).toISOString().slice(0, 10)}. One reward per purchase.</p>`,
        },
      },
      callsToAction: {
        type: 'CALL_TO_ACTION_LINKS',
        value: {
          buyNow: { type: 'WEB_LINK', value: `https://shop.svc-sim.invalid/${adId}/buy` },
          learnMore: { type: 'WEB_LINK', value: `https://shop.svc-sim.invalid/${adId}/about` },
        },
      },
    },
  };
}

function makeStores(rnd: Prng, merchantName: string): StoreLocation[] {
  const stores: StoreLocation[] = [];
  for (let s = 0; s < STORES_PER_AD; s++) {
    const place = POSTAL_CODES[Math.floor(rnd() * POSTAL_CODES.length)] as PostalPlace;
    // A point 0..40 km from the city centre in a random direction (flat-earth offset is fine at this scale).
    const km = rnd() * 40;
    const bearing = rnd() * 2 * Math.PI;
    const latitude = round6(place.latitude + (km / 111.32) * Math.cos(bearing));
    const longitude = round6(
      place.longitude + (km / (111.32 * Math.cos((place.latitude * Math.PI) / 180))) * Math.sin(bearing),
    );
    stores.push({
      storeName: `${merchantName} #${s + 1}`,
      address: {
        addressLine1: `${between(rnd, 1, 9999)} ${STREETS[Math.floor(rnd() * STREETS.length)]}`,
        addressLine2: rnd() < 0.3 ? `Suite ${between(rnd, 100, 999)}` : '',
        city: place.city,
        state: place.state,
        postalCode: place.postalCode,
        country: 'US',
      },
      phoneNumber: `+1-555-${String(between(rnd, 100, 999))}-${String(between(rnd, 1000, 9999))}`,
      distance: 0,
      latitude,
      longitude,
    });
  }
  return stores;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** Great-circle distance in meters (haversine, mean Earth radius 6,371,008.8 m). */
export function haversineMeters(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(a)));
}
