// `svc-ingest ledger migrate`: create or bring up to date the schema of the shared PostgreSQL ledger, as the schema's
// owner (a run creates the schema in a database without one, but never upgrades one: LEDGER_MIGRATION_PENDING).
import type { Command } from 'commander';
import { LATEST_VERSION, migrate } from '../ledger/postgres/migrations.ts';
import { addExamples, printJson, printText } from './common.ts';
import { addPgLedgerOptions, type PgLedgerOptions, pgLedgerContext } from './pg-ledger.ts';

async function runMigrate(opts: PgLedgerOptions): Promise<void> {
  const ctx = pgLedgerContext(opts, 'ledger migrate');
  // node-postgres is loaded only by the commands that use it.
  const { connectPg } = await import('../ledger/postgres/db.ts');
  const { resolvePgTarget } = await import('../ledger/postgres/url.ts');
  const { url, connection } = ctx.ledger;
  const db = await connectPg(resolvePgTarget(url, { connection }), {
    logger: ctx.logger,
    connection,
  });
  try {
    const r = await migrate(db).catch((err) => {
      throw db.fail('LEDGER_WRITE', 'cannot migrate', err);
    });
    if (opts.json) printJson({ ledger: db.location, ...r });
    else
      printText(
        r.applied.length === 0
          ? [`${db.location}: schema at version ${r.to} (the latest this svc-ingest knows); nothing to do`]
          : [
              `${db.location}: schema migrated from version ${r.from} to ${r.to}`,
              ...r.applied.map((m) => `  applied ${m.version}: ${m.name}`),
            ],
      );
  } finally {
    await db.close();
  }
}

/**
 * Adds `migrate` under the `ledger` command (created here if no other module has declared it yet).
 * Register after the module that declares `ledger`.
 */
export function define(program: Command): void {
  let ledger = program.commands.find((c) => c.name() === 'ledger');
  if (!ledger) {
    ledger = program.command('ledger').description('inspect and maintain the ledger');
    addExamples(ledger, [
      [
        'svc-ingest ledger migrate --ledger postgres://svc@db.internal/ledger',
        'create or upgrade the schema',
      ],
    ]);
  }
  const migrateCmd = addPgLedgerOptions(
    ledger
      .command('migrate')
      .description(
        `create or upgrade the shared PostgreSQL ledger's schema (to version ${LATEST_VERSION}); safe to run again`,
      ),
  )
    .addHelpText(
      'after',
      "\nAfter an upgrade, run it as the schema's owner, then ledger grant for each restricted role.\n" +
        'Exit status: 0 the schema is at the latest version (created, upgraded, or already there); 1 could not run\n' +
        '(no ledger, the database unreachable, a schema newer than this version knows).',
    )
    .action((opts: PgLedgerOptions) => runMigrate(opts));
  addExamples(migrateCmd, [
    [
      'svc-ingest ledger migrate --ledger postgres://svc@db.internal:5432/ledger',
      'create or upgrade the schema',
    ],
    [
      'SVC_LEDGER_PASSWORD_FILE=/run/secrets/pg svc-ingest ledger migrate --json',
      'the URL from SVC_LEDGER_URL',
    ],
  ]);
}
