// CLI entry: declares the commands and turns errors into exit statuses. The only place that exits.
import { Command, CommanderError } from 'commander';
import { ExitError, SvcIngestError } from '../errors.ts';
import * as ledger from './ledger.ts';
import * as reconcile from './reconcile.ts';
import * as redemptions from './redemptions.ts';
import * as send from './send.ts';
import * as simulate from './simulate.ts';
import * as stores from './stores.ts';
import * as tickets from './tickets.ts';

// A closed pipe on stdout (`svc-ingest … | head`) ends the command quietly, as other Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

const program = new Command('svc-ingest')
  .description(
    'Feed card transactions into the card-linked-offer service, in acknowledged batches with a ledger,\n' +
      'and check what came back (redemptions, store locations, tickets).',
  )
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

for (const mod of [send, simulate, redemptions, stores, tickets, reconcile, ledger]) mod.define(program);

function fail(message: string, code: number): void {
  process.stderr.write(`svc-ingest: ${message}\n`);
  process.exitCode = code;
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof ExitError) {
    process.exitCode = err.exitCode;
  } else if (err instanceof CommanderError) {
    // commander already printed the message (or the help); help and version end with 0.
    process.exitCode = err.exitCode === 0 ? 0 : 1;
  } else if (err instanceof SvcIngestError) {
    fail(`${err.code}: ${err.message}`, 1);
  } else {
    fail(`unexpected error: ${err instanceof Error ? err.message : String(err)}`, 1);
    if (process.env.SVC_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
  }
}
