// `svc-ingest stores`: store locations near a customer for one or more ads (POST getstorelocations).

import type { Command } from 'commander';
import type { CustomerLocation, StoreLocationsResponse } from '../client/models.ts';
import { SvcIngestError } from '../errors.ts';
import { stderrLine } from '../log.ts';
import { refuseTypedCardNumbers } from '../mask/typed.ts';
import {
  addConnectionOptions,
  addExamples,
  type CommonOptions,
  parseIntOption,
  parseNumberOption,
  printJson,
  printText,
  withContext,
} from './common.ts';

interface StoresOptions extends CommonOptions {
  ad: string[];
  lat?: string;
  lon?: string;
  postalCode?: string;
  radius: string;
  json?: boolean;
}

function customerLocation(opts: StoresOptions): CustomerLocation {
  if ((opts.lat === undefined) !== (opts.lon === undefined)) {
    throw new SvcIngestError('USAGE_INVALID', '--lat and --lon go together', { field: '--lat' });
  }
  if (opts.lat !== undefined && opts.lon !== undefined) {
    // latlong wins over a postal code (interface); the client drops the postal code.
    return {
      latlong: {
        latitude: parseNumberOption(opts.lat, '--lat'),
        longitude: parseNumberOption(opts.lon, '--lon'),
      },
    };
  }
  refuseTypedCardNumbers([['--postal-code', opts.postalCode]]);
  if (opts.postalCode !== undefined) return { postalCode: opts.postalCode };
  throw new SvcIngestError('USAGE_INVALID', 'give --lat and --lon, or --postal-code', { field: '--lat' });
}

/** Text form: one block per ad, one line per store. */
export function formatStores(res: StoreLocationsResponse): string[] {
  const lines: string[] = [];
  let count = 0;
  for (const [adId, stores] of Object.entries(res.adStoreLocations)) {
    lines.push(`ad ${adId}: ${stores.length} store(s)`);
    for (const s of stores) {
      count++;
      const a = s.address ?? {};
      const where = [a.addressLine1, a.city, a.state, a.postalCode].filter(Boolean).join(', ');
      lines.push(`  ${s.storeName}  ${where}  ${s.distance} away  (${s.latitude}, ${s.longitude})`);
    }
  }
  lines.push(`${count} store(s) in total`);
  return lines;
}

export async function runStores(opts: StoresOptions): Promise<void> {
  const location = customerLocation(opts);
  if (location.latlong && opts.postalCode !== undefined) {
    stderrLine('warn', 'usage.warning', 'svc-ingest: --postal-code ignored: --lat/--lon win');
  }
  const radius = parseIntOption(opts.radius, '--radius');
  await withContext(opts, async ({ client }) => {
    const res = await client.getStoreLocations({
      adIds: opts.ad,
      customerLocation: location,
      storeLocationRadiusInMeters: radius,
    });
    if (opts.json) printJson(res);
    else printText(formatStores(res));
  });
}

export function define(program: Command): void {
  const cmd = addConnectionOptions(
    program
      .command('stores')
      .description('list store locations near a customer for one or more ads')
      .requiredOption('--ad <id...>', 'ad id(s)')
      .option('--lat <x>', 'customer latitude (with --lon)')
      .option('--lon <y>', 'customer longitude (with --lat)')
      .option('--postal-code <z>', 'customer postal code (when no --lat/--lon)')
      .requiredOption('--radius <m>', 'search radius in meters, 1..48000')
      .option('--json', 'print the service answer as JSON on stdout'),
  );
  addExamples(cmd, [
    [
      'svc-ingest stores --ad 100001 --ad 100002 --lat 40.75 --lon -73.99 --radius 5000',
      'stores of two ads within 5 km of a point',
    ],
    ['svc-ingest stores --ad 100001 --postal-code 10001 --radius 48000 --json', 'by postal code, as JSON'],
  ]).action(async (opts: StoresOptions) => runStores(opts));
}
