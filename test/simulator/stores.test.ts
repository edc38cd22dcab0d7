// POST /v2/ads/getstorelocations: latlong and postal code, haversine radius filter and order, every limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anchorDay, buildCatalog } from '../../src/simulator/catalog.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { haversineMeters, POSTAL_CODES, startSimulator } from '../../src/simulator/index.ts';
import { call, fields } from './helpers.ts';

let sim: Simulator;
const ADS = Array.from({ length: 24 }, (_, i) => String(100_001 + i));
beforeAll(async () => {
  sim = await startSimulator({ seed: 2 });
});
afterAll(() => sim.close());

const stores = (body: unknown) => call(`${sim.url}/v2/ads/getstorelocations`, { body });
type Store = {
  distance: number;
  latitude: number;
  longitude: number;
  address: Record<string, string>;
  storeName: string;
};

describe('getstorelocations', () => {
  it('returns, per ad, the stores within the radius by great-circle distance, nearest first', async () => {
    const here = { latitude: 33.45, longitude: -112.07 };
    const res = await stores({
      adIds: ADS,
      customerLocation: { latlong: here },
      storeLocationRadiusInMeters: 48_000,
    });
    expect(res.status).toBe(200);
    const map = res.body.adStoreLocations as Record<string, Store[]>;
    expect(Object.keys(map).sort()).toEqual([...ADS].sort());
    const catalog = buildCatalog(2, anchorDay(Date.now()));
    let total = 0;
    for (const adId of ADS) {
      const list = map[adId]!;
      const want = catalog.ads
        .get(adId)!
        .stores.filter(
          (s) => haversineMeters(here.latitude, here.longitude, s.latitude, s.longitude) <= 48_000,
        );
      expect(list.map((s) => s.storeName).sort()).toEqual(want.map((s) => s.storeName).sort());
      for (let i = 0; i < list.length; i++) {
        const s = list[i]!;
        expect(s.distance).toBeCloseTo(
          haversineMeters(here.latitude, here.longitude, s.latitude, s.longitude),
          0,
        );
        expect(s.distance).toBeLessThanOrEqual(48_000);
        if (i > 0) expect(s.distance).toBeGreaterThanOrEqual(list[i - 1]!.distance);
        expect(Object.keys(s.address).sort()).toEqual([
          'addressLine1',
          'addressLine2',
          'city',
          'country',
          'postalCode',
          'state',
        ]);
      }
      total += list.length;
    }
    expect(total).toBeGreaterThan(0);
  });

  it('resolves a postal code from its table; latlong wins when both are given', async () => {
    const phoenix = POSTAL_CODES.find((p) => p.postalCode === '85004')!;
    const byCode = await stores({
      adIds: ADS,
      customerLocation: { postalCode: '85004' },
      storeLocationRadiusInMeters: 30_000,
    });
    const byPoint = await stores({
      adIds: ADS,
      customerLocation: { latlong: { latitude: phoenix.latitude, longitude: phoenix.longitude } },
      storeLocationRadiusInMeters: 30_000,
    });
    expect(byCode.body.adStoreLocations).toEqual(byPoint.body.adStoreLocations);
    const both = await stores({
      adIds: ADS,
      customerLocation: {
        latlong: { latitude: phoenix.latitude, longitude: phoenix.longitude },
        postalCode: '10001',
      },
      storeLocationRadiusInMeters: 30_000,
    });
    expect(both.body.adStoreLocations).toEqual(byPoint.body.adStoreLocations);
  });

  it('an unknown ad gets an empty list; a tiny radius finds nothing', async () => {
    const res = await stores({
      adIds: ['999'],
      customerLocation: { postalCode: '10001' },
      storeLocationRadiusInMeters: 1,
    });
    expect(res.body.adStoreLocations).toEqual({ '999': [] });
  });

  it.each([
    ['radius over 48000', { storeLocationRadiusInMeters: 48_001 }, 'storeLocationRadiusInMeters'],
    ['radius 0', { storeLocationRadiusInMeters: 0 }, 'storeLocationRadiusInMeters'],
    ['radius not an integer', { storeLocationRadiusInMeters: 10.5 }, 'storeLocationRadiusInMeters'],
    ['radius missing', { storeLocationRadiusInMeters: undefined }, 'storeLocationRadiusInMeters'],
    ['adIds empty', { adIds: [] }, 'adIds'],
    ['adIds not strings', { adIds: [100001] }, 'adIds'],
    ['no location', { customerLocation: {} }, 'customerLocation'],
    ['unknown postal code', { customerLocation: { postalCode: '99999' } }, 'customerLocation.postalCode'],
    [
      'latitude out of range',
      { customerLocation: { latlong: { latitude: 91, longitude: 0 } } },
      'customerLocation.latlong.latitude',
    ],
    ['unknown field', { extra: 1 }, 'extra'],
  ])('400 for %s', async (_name, change, field) => {
    const body = {
      adIds: ['100001'],
      customerLocation: { postalCode: '10001' },
      storeLocationRadiusInMeters: 1000,
      ...change,
    };
    const res = await stores(body);
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('ValidationException');
    expect(fields(res.body)).toEqual([field]);
  });
});
