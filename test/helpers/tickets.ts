// `svc-ingest tickets create` through the real CLI, for tests that need a ticket about a transaction.
import { type CliResult, runCliHere } from './cli.ts';

/**
 * Opens ticket `id` for `customer` about transaction `tx` on offer 100001; `extra` adds options.
 * @example await createTicket(env, 'T-1', 'cust-1000', '700001', ['--json'])
 */
export function createTicket(
  env: NodeJS.ProcessEnv,
  id: string,
  customer: string,
  tx: string,
  extra: string[] = [],
): Promise<CliResult> {
  return runCliHere(
    [
      'tickets',
      'create',
      '--ticket-id',
      id,
      '--customer',
      customer,
      '--offer',
      '100001',
      '--transaction',
      tx,
      '--description',
      'Reward not credited after purchase',
      ...extra,
    ],
    { env },
  );
}
