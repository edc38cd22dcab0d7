// `svc-ingest mappings` (the built-in profiles) and `svc-ingest mapping check|draft` (authoring a profile).
import path from 'node:path';
import { type Command, Option } from 'commander';
import { exitWith, SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { maskCardNumbers, maskDeep } from '../mask/index.ts';
import { addExamples, printJson, printText } from './common.ts';
import type { CheckFlags } from './mapping-check.ts';

export function define(program: Command): void {
  const list = program
    .command('mappings')
    .description('List the built-in mapping profiles (--mapping NAME) with what each reads.')
    .option('--json', 'one JSON array of {name, description, format} on stdout');
  addExamples(list, [
    ['svc-ingest mappings', 'names, formats and descriptions'],
    ["svc-ingest mappings --json | jq -r '.[].name'", 'the names only'],
  ]).action(async (flags: { json?: boolean }) => {
    const { listProfiles } = await import('../map/profile.ts');
    const profiles = await listProfiles();
    if (flags.json) return printJson(profiles);
    const width = Math.max(...profiles.map((p) => p.name.length));
    printText(
      profiles.map((p) => `${p.name.padEnd(width)}  ${(p.format ?? 'any').padEnd(6)}  ${p.description}`),
    );
  });

  const mapping = program
    .command('mapping')
    .description('Write a mapping profile: check one (and its columns against an export), or draft one.');
  addExamples(mapping, [
    ['svc-ingest mapping draft export.csv > my-bank.json', 'a first profile from the header and first row'],
    ['svc-ingest mapping check my-bank.json export.csv', 'the profile, and its columns against the header'],
    ['svc-ingest map --mapping my-bank.json --limit 20 export.csv', 'what it makes of the first records'],
  ]);

  const check = mapping
    .command('check')
    .summary('check a profile, and its columns against an export')
    .description(
      'Load and check a profile (a bad key is reported with its JSON path); with FILE, check every column\n' +
        "the profile names against the file's CSV header (NDJSON: against every record), map every record\n" +
        '(or --sample N of them, spread over the file) and report per field what was filled, missing and\n' +
        'distinct, codes outside the lists, times in a DST repeated hour, and warnings of a profile that is\n' +
        'probably wrong (one zone for merchants in several, repeated ids, amounts in another currency, posting\n' +
        "before the transaction, a type against its amount's sign).",
    )
    .argument('<profile>', 'a profile file, or a built-in name')
    .argument('[file]', 'an export to check the columns against')
    .addOption(
      new Option('--format <format>', 'format of FILE (default: from the extension)').choices([
        'csv',
        'ndjson',
      ]),
    )
    .option('--delimiter <char>', 'CSV delimiter (default: the profile\'s, else ",")')
    .option(
      '--strict',
      'a column a rule names that the CSV header lacks, or a warning of the records, is an error (exit 1)',
    )
    .option('--sample <n>', 'map n records drawn evenly from the whole file instead of every record')
    .addHelpText(
      'after',
      '\nExit status: 0 the profile is valid (and FILE has its required columns); 1 it is not (one line\n' +
        'naming the file and the JSON path of the bad key), or FILE lacks a column.',
    );
  addExamples(check, [
    ['svc-ingest mapping check northwind-csv samples/northwind.csv', 'a built-in profile against a sample'],
    [
      'svc-ingest mapping check --strict ./my-bank.json export.csv.gz',
      'every column a rule names must exist',
    ],
    [
      'svc-ingest mapping check --sample 10000 ./my-bank.json big.ndjson',
      '10,000 records from all over the file',
    ],
  ]).action(async (profile: string, file: string | undefined, flags: CheckFlags) => {
    const { runCheck } = await import('./mapping-check.ts');
    exitWith(await runCheck(profile, file, flags));
  });

  const draft = mapping
    .command('draft')
    .summary("propose a profile from an export's header or first object")
    .description(
      'Propose a profile for an export from its CSV header and first row (or its first NDJSON object),\n' +
        'matching known column names; guesses are marked TODO. Prints the profile JSON on stdout.',
    )
    .argument('<file>', 'an export (CSV or NDJSON, optionally .gz)')
    .addOption(
      new Option('--format <format>', 'format of FILE (default: from the extension)').choices([
        'csv',
        'ndjson',
      ]),
    )
    .option('--delimiter <char>', 'CSV delimiter (default ",")')
    .option('--name <name>', 'profile name (default: the file name)');
  addExamples(draft, [
    ['svc-ingest mapping draft export.csv > config/mappings/my-bank.json', 'a starting point to edit'],
    ['svc-ingest mapping draft --format ndjson feed.jsonl | jq .fields', 'what it matched'],
  ]).action(async (file: string, flags: CheckFlags & { name?: string }) => {
    await runDraft(file, flags);
  });
}

/** Records a draft reads (NDJSON: paths into arrays, first-of rules, ids that repeat). */
const DRAFT_RECORDS = 1000;

/** The first records of an input (up to `max`, with its format), or undefined when it holds none. */
async function firstRecord(
  file: string,
  flags: CheckFlags,
  max = 1,
): Promise<
  | {
      format: 'csv' | 'ndjson';
      fields: Record<string, unknown>;
      header?: string[];
      records: Record<string, unknown>[];
    }
  | undefined
> {
  const { resolveInputs, readInput } = await import('../read/open.ts');
  const [spec] = await resolveInputs([file], { format: flags.format });
  if (spec === undefined) return undefined;
  let header: string[] | undefined;
  const records: Record<string, unknown>[] = [];
  outer: for await (const items of readInput(spec, {
    delimiter: flags.delimiter,
    stdin: cliIo().stdin,
    onHeader: (c) => {
      header = c;
    },
  })) {
    for (const item of items) {
      if (item.kind !== 'record') continue;
      records.push(item.record.fields);
      if (records.length >= max) break outer;
    }
  }
  if (records.length > 0)
    return { format: spec.format, fields: records[0] as Record<string, unknown>, header, records };
  return header
    ? { format: 'csv', fields: Object.fromEntries(header.map((h) => [h, ''])), header, records }
    : undefined;
}

async function runDraft(file: string, flags: CheckFlags & { name?: string }): Promise<void> {
  const { draftProfile } = await import('../map/draft.ts');
  const first = await firstRecord(file, flags, DRAFT_RECORDS);
  if (first === undefined)
    throw new SvcIngestError('INPUT_PARSE', `${file}: no header and no record to draft a profile from`, {
      source: file,
    });
  // Named after the file (a card number in it masked, as on every line we print).
  const name =
    flags.name ??
    maskCardNumbers(
      path
        .basename(file)
        .replace(/\.gz$/, '')
        .replace(/\.(csv|ndjson|jsonl)$/, ''),
    );
  cliIo().stdout.write(
    // Sample values and column names as every other command prints them: card numbers masked.
    `${JSON.stringify(
      maskDeep(
        draftProfile({
          name,
          format: first.format,
          record: first.fields,
          ...(first.format === 'ndjson' ? { records: first.records } : {}),
        }),
      ),
      null,
      2,
    )}\n`,
  );
}
