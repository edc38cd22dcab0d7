// `svc-ingest mappings` (the built-in profiles) and `svc-ingest mapping check|draft` (authoring a profile).

import path from 'node:path';
import { type Command, Option } from 'commander';
import { EXIT, SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import type { CompiledProfile } from '../map/types.ts';
import { maskCardNumbers, maskDeep } from '../mask.ts';
import { addExamples, printJson, printText, printWarning } from './common.ts';

interface CheckFlags {
  format?: 'csv' | 'ndjson';
  delimiter?: string;
  strict?: boolean;
}

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
        "the profile names against the file's CSV header (NDJSON: against its first record).",
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
    .option('--strict', 'a column a rule names that the CSV header lacks is an error (else: a warning)')
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
  ]).action(async (profile: string, file: string | undefined, flags: CheckFlags) => {
    cliIo().exitCode = await runCheck(profile, file, flags);
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

/** The first record of an input (with its format), or undefined when it holds none. */
async function firstRecord(
  file: string,
  flags: CheckFlags,
): Promise<{ format: 'csv' | 'ndjson'; fields: Record<string, unknown>; header?: string[] } | undefined> {
  const { resolveInputs, readInput } = await import('../read/open.ts');
  const [spec] = await resolveInputs([file], { format: flags.format });
  if (spec === undefined) return undefined;
  let header: string[] | undefined;
  for await (const items of readInput(spec, {
    delimiter: flags.delimiter,
    stdin: cliIo().stdin,
    onHeader: (c) => {
      header = c;
    },
  })) {
    for (const item of items)
      if (item.kind === 'record') return { format: spec.format, fields: item.record.fields, header };
  }
  return header
    ? { format: 'csv', fields: Object.fromEntries(header.map((h) => [h, ''])), header }
    : undefined;
}

async function runCheck(name: string, file: string | undefined, flags: CheckFlags): Promise<number> {
  const [{ loadProfile }, { openInputs }, { compileGetter, PathError }] = await Promise.all([
    import('../map/profile.ts'),
    import('../prepare/inputs.ts'),
    import('../map/path.ts'),
  ]);
  const profile = await loadProfile(name === 'canonical' ? undefined : name);
  const lines = [
    `mapping ${profile.name}: valid (${profile.columns.length} column use${profile.columns.length === 1 ? '' : 's'})`,
    `  required columns: ${profile.requiredColumns.join(', ') || '(none)'}`,
  ];
  const needed = new Set(profile.requiredColumns);
  const optional = [...new Set(profile.columns.filter((c) => !needed.has(c.column)).map((c) => c.column))];
  if (optional.length > 0) lines.push(`  optional columns: ${optional.join(', ')}`);
  if (profile.relaxed.length > 0)
    lines.push(`  sent without when empty ("required": false): ${profile.relaxed.join(', ')}`);
  if (profile.ownIds.length > 0)
    lines.push(`  the bank's own numeric ids, sent unchecked for card numbers: ${profile.ownIds.join(', ')}`);
  for (const r of profile.requiredWhere)
    lines.push(`  required only for merchants in ${r.countries.join(', ')}: ${r.field}`);
  const todo = await stillToWrite(profile);
  lines.push(...todo);
  let warnings = 0;
  const warn = (message: string) => {
    warnings++;
    printWarning(message);
  };
  // A code value outside the code lists is a warning of its own (never counted as a missing column).
  for (const n of profile.codeNotes) printWarning(n);
  if (file === undefined) {
    printText(lines);
    return EXIT.OK;
  }
  // Before the header check, which stops at the first column a draft left at "?": the whole list first.
  if (todo.length > 0) printText(lines.splice(0));
  const { specs } = await openInputs([file], profile, {
    format: flags.format,
    delimiter: flags.delimiter,
    strict: Boolean(flags.strict),
    warn,
  });
  const spec = specs[0];
  if (spec !== undefined && spec.format === 'ndjson') {
    // NDJSON has no header: each path is tried on the first record (an optional key may be absent there).
    const first = await firstRecord(file, flags);
    if (first === undefined) lines.push(`${file}: no record to check the paths against`);
    else {
      let absent = 0;
      // A column's text has its escapes removed: one that no longer parses as a path is a key as it is.
      const readPath = (text: string) => {
        try {
          return compileGetter(text);
        } catch (err) {
          if (!(err instanceof PathError)) throw err;
          return (rec: Record<string, unknown>) => (Object.hasOwn(rec, text) ? rec[text] : undefined);
        }
      };
      // As for a CSV header: a required field's path (no default) absent is an error, any other a warning
      // (an error under --strict); a draft's "?" is never found.
      const missing: Array<(typeof profile.columns)[number]> = [];
      for (const use of profile.columns) {
        if (readPath(use.column)(first.fields) !== undefined) continue;
        absent++;
        missing.push(use);
        if (!use.required)
          warn(`${file}: the first record has nothing at ${JSON.stringify(use.column)} named by ${use.rule}`);
      }
      const needs = missing.filter((u) => u.required || flags.strict);
      if (needs.length > 0) {
        const named = needs.map((u) => `${JSON.stringify(u.column)} (${u.rule})`).join(', ');
        throw new SvcIngestError(
          'INPUT_HEADER_MISSING_COLUMN',
          `${file}: the first record has nothing at ${named}, needed by mapping ${profile.name}${needs.some((u) => u.required) ? '' : ' (--strict wants every path a rule names)'}`,
          { source: file },
        );
      }
      lines.push(
        `${file}: ${profile.columns.length - absent} of ${profile.columns.length} paths found in the first record`,
      );
    }
  } else {
    const unknown = await sampleCodes(file, profile, flags);
    for (const line of unknown) printWarning(`${file}: ${line}`);
    lines.push(
      warnings === 0
        ? `${file}: the header has every column the profile names`
        : `${file}: the header has every required column; ${warnings} optional one${warnings === 1 ? ' is' : 's are'} missing (see the warnings)`,
    );
  }
  printText(lines);
  return EXIT.OK;
}

/** The fields a draft left at `"from": "?"`, each with what it needs (mapping check's list). */
async function stillToWrite(profile: CompiledProfile): Promise<string[]> {
  const { fieldNeeds } = await import('../map/field-needs.ts');
  const todo = [...new Set(profile.columns.filter((c) => c.column === '?').map((c) => c.field))];
  if (todo.length === 0) return [];
  return [
    `  still to be written (${todo.length} field${todo.length === 1 ? '' : 's'} at "from": "?"):`,
    ...todo.map((f) => `    ${f}: ${fieldNeeds(f)}`),
  ];
}

/** Records of FILE mapped to find code values outside the code lists (at most this many). */
const CODE_SAMPLE = 1000;

/** Code values outside the code lists among FILE's first CODE_SAMPLE mapped records, as report lines. */
async function sampleCodes(file: string, profile: CompiledProfile, flags: CheckFlags): Promise<string[]> {
  const [{ resolveInputs }, { prepareInput }, { createCodeTally }, { unknownCodeLines }] = await Promise.all([
    import('../read/open.ts'),
    import('../prepare/prepare.ts'),
    import('../model/code-lists.ts'),
    import('../map/code-notes.ts'),
  ]);
  const [spec] = await resolveInputs([file], { format: flags.format });
  if (spec === undefined) return [];
  const tally = createCodeTally();
  let n = 0;
  let mapped = 0;
  outer: for await (const items of prepareInput(spec, profile, {
    delimiter: flags.delimiter ?? profile.delimiter,
    stdin: cliIo().stdin,
  })) {
    for (const item of items) {
      if (item.kind === 'tx') {
        mapped++;
        tally.add(item.codes);
      }
      if (++n >= CODE_SAMPLE) break outer;
    }
  }
  return unknownCodeLines(tally.counts(), mapped).map((l) => `${l}, among the first ${n} read`);
}

async function runDraft(file: string, flags: CheckFlags & { name?: string }): Promise<void> {
  const { draftProfile } = await import('../map/draft.ts');
  const first = await firstRecord(file, flags);
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
    `${JSON.stringify(maskDeep(draftProfile({ name, format: first.format, record: first.fields })), null, 2)}\n`,
  );
}
