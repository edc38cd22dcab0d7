// `svc-ingest map`: try a mapping profile on an export. Mapped TransactionNotifications go to stdout as NDJSON
// (card numbers masked), each reject to stderr with its line and reasons; nothing is sent, no ledger is touched.

import { once } from 'node:events';
import { type Command, Option } from 'commander';
import { exitWith, SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { formatStderrLine } from '../log.ts';
import { addExamples, printWarning } from './common.ts';

interface MapFlags {
  mapping: string;
  format?: 'csv' | 'ndjson';
  delimiter?: string;
  limit?: string;
  strict?: boolean;
  allowUnterminated?: boolean;
}

export function define(program: Command): void {
  const cmd = program
    .command('map')
    .summary('try a mapping profile: mapped records on stdout, rejects on stderr; nothing sent')
    .description(
      'Try a mapping profile: print each record of the input as the TransactionNotification it becomes\n' +
        '(NDJSON on stdout, card numbers masked) and each reject with its line and reasons on stderr.\n' +
        'Nothing is sent and no ledger is read or written.',
    )
    .argument('[input...]', "input files; '-' or none reads standard input")
    .option(
      '--mapping <file|name>',
      'mapping profile (a file, or a built-in name: svc-ingest mappings)',
      'canonical',
    )
    .addOption(
      new Option('--format <format>', 'input format (default: from the extension)').choices([
        'csv',
        'ndjson',
      ]),
    )
    .option('--delimiter <char>', 'CSV delimiter (default: the profile\'s, else ",")')
    .option('--limit <n>', 'stop after the first n records (mapped or rejected)')
    .option(
      '--strict',
      'every column a mapping rule names must be in the CSV header, and a warning of a probably wrong profile is an error (exit 1)',
    )
    .option(
      '--allow-unterminated',
      "a stream's last record may lack its final line break (as send; without it such a stream ends as cut short, exit 1)",
    )
    .addHelpText(
      'after',
      '\nExit status: 0 every record mapped; 1 could not run (bad profile, unreadable input, missing column),\n' +
        'or --strict and the mapping warned;\n' +
        '2 some records rejected (the same verdicts as send, duplicate transactionIds included).',
    );
  addExamples(cmd, [
    ['svc-ingest map --mapping northwind-csv --limit 5 samples/northwind.csv', 'the first five records'],
    [
      'svc-ingest map --mapping ./my-bank.json export.csv 2>rejects.txt | jq .postedAmount',
      'a profile being written',
    ],
    [
      'zcat feed.ndjson.gz | svc-ingest map --mapping lithic --format ndjson - >/dev/null',
      'only the rejects',
    ],
  ]).action(async (inputs: string[], flags: MapFlags) => {
    exitWith(await runMap(inputs, flags));
  });
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new SvcIngestError(
      'USAGE_INVALID',
      `${flag}: expected a positive integer, got ${JSON.stringify(value)}`,
    );
  return n;
}

/** The first record of each field sent without it ("required": false), once a field. */
function relaxedLines(
  item: { source: string; line: number; relaxed?: readonly string[] },
  profileName: string,
  seen: Set<string>,
): string {
  let err = '';
  for (const field of item.relaxed ?? []) {
    if (seen.has(field)) continue;
    seen.add(field);
    err += formatStderrLine(
      'warn',
      'input.warning',
      `svc-ingest: warning: ${item.source}:${item.line}: records without ${field} are sent without it (mapping ${profileName} marks it "required": false)`,
    );
  }
  return err;
}

/** A notification's JSON with the values of `fields` masked (the rest as send sends it). */
function maskOwnIds(json: string, fields: readonly string[], mask: (s: string) => string): string {
  const tx = JSON.parse(json) as Record<string, unknown>;
  for (const f of fields) if (typeof tx[f] === 'string') tx[f] = mask(tx[f] as string);
  return JSON.stringify(tx);
}

/** One reject as a stderr line: `source:line: field: message; field: message`. */
function rejectLine(source: string, line: number, errors: Array<{ field: string; message: string }>): string {
  const text = `${source}:${line}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`;
  return formatStderrLine('warn', 'map.reject', text, { source, line, errors });
}

async function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (text !== '' && !stream.write(text)) await once(stream, 'drain');
}

async function runMap(inputs: string[], flags: MapFlags): Promise<number> {
  const [
    { loadProfile },
    { openInputs },
    { choosePool, prepareChunks },
    { createSpillingFingerprintSet },
    { maskCardNumbers },
    { loadConfig },
    { createCodeTally },
    { mapSilent, printMapEnd },
  ] = await Promise.all([
    import('../map/profile.ts'),
    import('../prepare/inputs.ts'),
    import('../prepare/choose.ts'),
    import('../sorted-runs/fingerprint-set.ts'),
    import('../mask/index.ts'),
    import('../config/index.ts'),
    import('../model/code-lists.ts'),
    import('./map-notes.ts'),
  ]);
  const limit = positiveInt(flags.limit, '--limit');
  // With --limit only the first records matter: read them inline rather than start a pool.
  const pool = choosePool(loadConfig().prepare, { dryRun: limit === undefined, concurrency: 0 });
  if (inputs.length === 0 && cliIo().stdin.isTTY) {
    throw new SvcIngestError(
      'USAGE_INVALID',
      "no input: name export files, or pipe records into standard input ('-' reads the terminal); see --help",
    );
  }
  const mapping = flags.mapping === 'canonical' ? undefined : flags.mapping;
  const profile = await loadProfile(mapping);
  const { specs, delimiter, headers, onHeader } = await openInputs(
    inputs.length === 0 ? ['-'] : inputs,
    profile,
    {
      format: flags.format,
      delimiter: flags.delimiter,
      strict: Boolean(flags.strict),
      allowUnterminated: Boolean(flags.allowUnterminated),
      warn: printWarning,
    },
  );
  for (const note of profile.codeNotes) printWarning(note);
  const codes = createCodeTally();
  const relaxedSeen = new Set<string>();
  // The same duplicate check as send, so map and send --dry-run agree record for record.
  const seen = createSpillingFingerprintSet();
  let read = 0;
  let expanded = 0;
  let mapped = 0;
  let rejected = 0;
  const silent = mapSilent(profile);
  // The declared own ids' fields (`sourceAccountId (prefix "BR-", width 19)` names sourceAccountId).
  const ownIds = profile.ownIds.map((d) => d.split(' ')[0] as string);
  try {
    outer: for (const spec of specs) {
      const chunks = prepareChunks(
        spec,
        profile,
        {
          mapping,
          delimiter,
          stdin: cliIo().stdin,
          onHeader: spec.path === '-' ? onHeader : undefined,
          columns: headers.get(spec),
          pool,
        },
        silent,
      );
      for await (const chunk of chunks) {
        let out = '';
        let err = '';
        let stop = false;
        for (const item of chunk) {
          // --limit counts records: the notifications the last one expands into are printed with it.
          if (limit !== undefined && read >= limit && item.expanded !== true) {
            stop = true;
            break;
          }
          if (item.expanded === true) expanded++;
          else read++;
          if (item.kind === 'reject') {
            rejected++;
            err += rejectLine(item.source, item.line, item.errors);
          } else if (!seen.add(item.id)) {
            rejected++;
            err += rejectLine(item.source, item.line, [
              {
                field: 'transactionId',
                message: `duplicate transactionId ${maskCardNumbers(item.id)} within this run; the first one is sent`,
              },
            ]);
          } else {
            mapped++;
            codes.add(item.codes);
            err += relaxedLines(item, profile.name, relaxedSeen);
            // Exactly the JSON send sends (validation has refused a card number in any id or code, free text is
            // masked when mapped), but for the ids the profile declares the bank's own: sent as they are, printed masked.
            out += `${ownIds.length > 0 ? maskOwnIds(item.json, ownIds, maskCardNumbers) : item.json}\n`;
          }
        }
        // A record's expanded notifications share its chunk: at the chunk's end the limit is met whole.
        if (limit !== undefined && read >= limit) stop = true;
        // Every line this command prints goes through the mask (column names, the profile's name, paths).
        await write(cliIo().stderr, maskCardNumbers(err));
        await write(cliIo().stdout, out);
        if (stop) break outer;
      }
    }
  } finally {
    seen.close?.();
  }
  return printMapEnd(profile, silent, Boolean(flags.strict), {
    read,
    expanded,
    mapped,
    rejected,
    codes: codes.counts(),
  });
}
