// `svc-ingest redemptions`: one customer's redeemed ads (GET getCustomerAdRedemptions, with a session token).

import type { Command } from 'commander';
import type { RedemptionsResponse } from '../client/models.ts';
import { refuseTypedCardNumbers } from '../mask/typed.ts';
import {
  addConnectionOptions,
  addExamples,
  type CommonOptions,
  parseIntOption,
  printJson,
  printText,
  withContext,
} from './common.ts';

interface RedemptionsOptions extends CommonOptions {
  customer: string;
  lookbackDays?: string;
  json?: boolean;
}

/** Text form: one line per redemption, then a count. */
export function formatRedemptions(customer: string, res: RedemptionsResponse): string[] {
  const lines = res.redemptions.map((r) => {
    const ad = res.ads[r.adId];
    const merchant = ad?.merchantName ?? '?';
    return `${r.redemptionDate}  ${r.redemptionId}  transaction ${r.transactionId}  reward ${r.amount}  ${merchant} (ad ${r.adId})`;
  });
  lines.push(`${res.redemptions.length} redemption(s) for customer ${customer} [requestId ${res.requestId}]`);
  return lines;
}

export async function runRedemptions(opts: RedemptionsOptions): Promise<void> {
  refuseTypedCardNumbers([['--customer', opts.customer]]);
  const lookback =
    opts.lookbackDays === undefined ? undefined : parseIntOption(opts.lookbackDays, '--lookback-days');
  await withContext(opts, async ({ client }) => {
    const res = await client.getRedemptions(
      opts.customer,
      lookback === undefined ? {} : { lookbackWindowInDays: lookback },
    );
    if (opts.json) printJson(res);
    else printText(formatRedemptions(opts.customer, res));
  });
}

export function define(program: Command): void {
  const cmd = addConnectionOptions(
    program
      .command('redemptions')
      .description("list one customer's redeemed ads (starts or reuses a session for the customer)")
      .requiredOption('--customer <id>', 'sourceCustomerId')
      .option('--lookback-days <n>', 'lookbackWindowInDays, 0..396 (service default 120)')
      .option('--json', 'print the service answer as JSON on stdout'),
  );
  addExamples(cmd, [
    ['svc-ingest redemptions --customer cust-0001', 'one line per redemption'],
    [
      'svc-ingest redemptions --customer cust-0001 --lookback-days 30 --json | jq .redemptions',
      'the last 30 days, as JSON',
    ],
  ]).action(async (opts: RedemptionsOptions) => runRedemptions(opts));
}
