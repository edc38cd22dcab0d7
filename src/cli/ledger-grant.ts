// `svc-ingest ledger grant`: the exact GRANTs a restricted role needs on the shared PostgreSQL ledger, for the schema
// version this build writes, printed (to review or hand to a DBA) or applied as the connected role (the owner).
import type { Command } from 'commander';
import { SvcIngestError } from '../errors.ts';
import {
  GRANT_PURPOSES,
  type GrantPurpose,
  grantScript,
  grantStatements,
} from '../ledger/postgres/grants.ts';
import { LATEST_VERSION } from '../ledger/postgres/migrations.ts';
import { resolvePgTarget } from '../ledger/postgres/url.ts';
import { addExamples, printJson, printText } from './common.ts';
import { addPgLedgerOptions, connectReadOnly, type PgLedgerOptions, pgLedgerContext } from './pg-ledger.ts';

interface GrantOptions extends PgLedgerOptions {
  role: string;
  for: string[];
  apply?: boolean;
}

/** A role name PostgreSQL accepts (at most 63 bytes, no NUL); anything else is refused before any SQL is made. */
function checkRole(role: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(role))
    throw new SvcIngestError(
      'USAGE_INVALID',
      `--role: expected a role name (a letter or _, then letters, digits, _, $ or -; at most 63), got "${role.slice(0, 70)}"`,
      { field: '--role' },
    );
  return role;
}

function checkPurposes(list: string[]): GrantPurpose[] {
  const out = new Set<GrantPurpose>();
  for (const p of list.flatMap((x) => x.split(',')).map((x) => x.trim())) {
    if (!(GRANT_PURPOSES as readonly string[]).includes(p))
      throw new SvcIngestError(
        'USAGE_INVALID',
        `--for: expected ${GRANT_PURPOSES.join(', ')} (one or more, comma-separated), got "${p.slice(0, 40)}"`,
        { field: '--for' },
      );
    out.add(p as GrantPurpose);
  }
  return [...out];
}

async function runGrant(opts: GrantOptions): Promise<void> {
  const role = checkRole(opts.role);
  const purposes = checkPurposes(opts.for);
  const ctx = pgLedgerContext(opts, 'ledger grant');
  const { url } = ctx.ledger;
  const target = resolvePgTarget(url);
  const statements = grantStatements(target.schema, role, purposes);
  const result = {
    ledger: target.location,
    schema: target.schema,
    version: LATEST_VERSION,
    role,
    for: purposes,
    statements,
    applied: false,
  };
  if (opts.apply) {
    const { db, hasSchema } = await connectReadOnly(ctx);
    try {
      if (!hasSchema)
        throw new SvcIngestError(
          'USAGE_INVALID',
          `the ledger database ${db.location} has no ledger schema ${target.schema} yet: run svc-ingest ledger migrate first`,
        );
      await db
        .withClient(async (c) => {
          await c.query('BEGIN');
          try {
            for (const s of statements) await c.query(s);
            await c.query('COMMIT');
          } catch (err) {
            await c.query('ROLLBACK').catch(() => {});
            throw err;
          }
        })
        .catch((err: unknown) => {
          throw db.fail('LEDGER_WRITE', `cannot grant ${role} its privileges in`, err);
        });
      result.applied = true;
    } finally {
      await db.close();
    }
  }
  if (opts.json) printJson(result);
  else if (opts.apply)
    printText([
      `${result.ledger}: granted ${role} the privileges for ${purposes.join(', ')} at schema version ${LATEST_VERSION} (${statements.length} statements)`,
    ]);
  else printText(grantScript(target.schema, role, purposes).split('\n'));
}

/** Adds `grant` under the `ledger` command. Register after the module that declares `ledger`. */
export function define(program: Command): void {
  const ledger = program.commands.find((c) => c.name() === 'ledger');
  if (!ledger) return;
  const cmd = addPgLedgerOptions(
    ledger
      .command('grant')
      .description(
        `print (or --apply) the GRANTs a restricted role needs on the PostgreSQL ledger at schema version ${LATEST_VERSION}`,
      ),
  )
    .requiredOption('--role <name>', 'the role to grant to (created beforehand by an administrator)')
    .requiredOption(
      '--for <uses...>',
      `what the role runs: ${GRANT_PURPOSES.join(', ')} (send: send and its dry run; backfill: plan, work and status; ` +
        'tickets: tickets create, listen and get; read: status, find, failed, trace, reconcile; prune: ledger prune)',
    )
    .option('--apply', 'run the GRANTs, as the role of --ledger (the schema’s owner), in one transaction')
    .addHelpText(
      'after',
      '\nRun it again after every ledger migrate: a new schema version may add tables.\n' +
        'Exit status: 0 printed (or applied); 1 could not run (a bad role or use, no schema, the schema older or newer\n' +
        'than this version, not allowed to grant).',
    )
    .action((opts: GrantOptions) => runGrant(opts));
  addExamples(cmd, [
    [
      'svc-ingest ledger grant --ledger "postgres://feed_a_owner@db.internal/ledger?schema=feed_a" --role feed_a_sender --for send',
      'print the GRANTs for the nightly send',
    ],
    [
      'svc-ingest ledger grant --ledger "postgres://feed_a_owner@db.internal/ledger?schema=feed_a" --role feed_a_sender --for send,tickets --apply',
      'apply them as the schema’s owner',
    ],
  ]);
}
