// `svc-ingest mapping check PROFILE [FILE]`: the profile, its columns against the export, and with FILE every record
// (or --sample N spread over the file) mapped: per field how many are filled, missing, distinct, outside the code
// lists, the timestamps in a DST repeated hour, and the warnings of a profile that is probably wrong.

import { EXIT, SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { stderrLine } from '../log.ts';
import type { CompiledProfile } from '../map/types.ts';
import type { TransactionNotification } from '../model/transaction.ts';
import type { RawRecord } from '../read/types.ts';
import { printText, printWarning } from './common.ts';

export interface CheckFlags {
  format?: 'csv' | 'ndjson';
  delimiter?: string;
  strict?: boolean;
  sample?: string;
}

/** Distinct values counted per field, at most (past it: "1000+"). */
const DISTINCT_CAP = 1000;

export async function runCheck(name: string, file: string | undefined, flags: CheckFlags): Promise<number> {
  const [{ loadProfile }, { openInputs }, { readInput }] = await Promise.all([
    import('../map/profile.ts'),
    import('../prepare/inputs.ts'),
    import('../read/open.ts'),
  ]);
  const sample = parseSample(flags.sample);
  const profile = await loadProfile(name === 'canonical' ? undefined : name);
  const lines = describeProfile(profile);
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
  const { specs, delimiter } = await openInputs([file], profile, {
    format: flags.format,
    delimiter: flags.delimiter,
    strict: Boolean(flags.strict),
    warn,
  });
  const spec = specs[0];
  if (spec === undefined) {
    printText(lines);
    return EXIT.OK;
  }
  const records: RawRecord[] = [];
  const report = await createReport(profile, spec.format === 'ndjson');
  let seen = 0;
  // --sample N: a reservoir of N records drawn evenly from the whole file (a fixed seed: the same file, the same
  // sample); without it every record is mapped as it is read.
  let seed = 0x9e3779b9;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x100000000;
  };
  for await (const items of readInput(spec, { delimiter, stdin: cliIo().stdin })) {
    for (const item of items) {
      if (item.kind !== 'record') {
        report.unreadable++;
        continue;
      }
      seen++;
      if (sample === undefined) report.add(item.record);
      else if (records.length < sample) records.push(item.record);
      else {
        const j = Math.floor(random() * seen);
        if (j < sample) records[j] = item.record;
      }
    }
  }
  for (const r of records) report.add(r);
  if (spec.format === 'csv')
    lines.push(
      warnings === 0
        ? `${file}: the header has every column the profile names`
        : `${file}: the header has every required column; ${warnings} optional one${warnings === 1 ? ' is' : 's are'} missing (see the warnings)`,
    );
  const out = report.finish(file, seen, sample, Boolean(flags.strict));
  // --strict: a warning of the records is an error (exit 1), as for a missing column.
  for (const w of out.warnings)
    if (flags.strict) stderrLine('error', 'mapping.warning', `svc-ingest: error (--strict): ${file}: ${w}`);
    else warn(`${file}: ${w}`);
  lines.push(...out.lines);
  if (out.missing.length > 0) {
    printText(lines);
    const named = out.missing.map((u) => `${JSON.stringify(u.column)} (${u.rule})`).join(', ');
    throw new SvcIngestError(
      'INPUT_HEADER_MISSING_COLUMN',
      `${file}: no record has anything at ${named}, needed by mapping ${profile.name}${out.missing.some((u) => u.required) ? '' : ' (--strict wants every path a rule names)'}`,
      { source: file },
    );
  }
  printText(lines);
  if (flags.strict && out.warnings.length > 0) {
    stderrLine(
      'error',
      'mapping.strict',
      `svc-ingest: mapping check --strict: ${out.warnings.length} warning${out.warnings.length === 1 ? '' : 's'} on ${file} (each above)`,
    );
    return EXIT.USAGE;
  }
  return EXIT.OK;
}

function parseSample(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `--sample: expected a positive integer, got ${JSON.stringify(text)}`,
    );
  return n;
}

function describeProfile(profile: CompiledProfile): string[] {
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
  if (profile.notes.exportZone)
    lines.push(
      `  local times read in ${[...new Set(profile.notes.fixedZones.map((z) => z.zone))].join(', ')}, the export's own zone wherever the merchant is ("timeZoneScope": "export"): assumed, not checked`,
    );
  for (const r of profile.requiredWhere)
    lines.push(`  required only for merchants in ${r.countries.join(', ')}: ${r.field}`);
  if (profile.expand !== undefined)
    lines.push(`  one notification per element of ${profile.expand.from} (as ${profile.expand.as})`);
  return lines;
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

/** What the records of the file make of the profile, record by record. */
async function createReport(profile: CompiledProfile, ndjson: boolean) {
  const [
    { compileGetter, PathError },
    { createSilentErrors, silentNotes, silentWarnings },
    codes,
    { unknownCodeLines },
    { TIME_READS },
    { ambiguousTimes, ambiguousText },
  ] = await Promise.all([
    import('../map/path.ts'),
    import('../map/silent-errors.ts'),
    import('../model/code-lists.ts'),
    import('../map/code-notes.ts'),
    import('../map/timestamp.ts'),
    import('../map/ambiguous-times.ts'),
  ]);
  const uses = ndjson ? pathUses(profile, compileGetter, PathError) : [];
  let looked = 0;
  /** The paths present in one record (an expanded one's element view: its paths name the element). */
  const look = (fields: Record<string, unknown>) => {
    looked++;
    for (const u of uses) if (u.get(fields) !== undefined) u.found++;
  };
  const silent = createSilentErrors(profile, { ids: true });
  const repeated0 = { ...TIME_READS.repeatedByField };
  const tally = codes.createCodeTally();
  const filled = new Map<string, number>();
  const distinct = new Map<string, Set<unknown>>();
  const rejectedBy = new Map<string, number>();
  let valid = 0;
  let rejected = 0;
  let expanded = 0;
  let suffixed = 0;
  let mapped = 0;
  const one = (fields: Record<string, unknown>, source: Record<string, unknown>, invalidUtf8: boolean) => {
    mapped++;
    const r = profile.mapValid(fields, invalidUtf8);
    if (!r.ok) {
      rejected++;
      for (const e of r.errors) rejectedBy.set(e.field, (rejectedBy.get(e.field) ?? 0) + 1);
      return;
    }
    valid++;
    countFields(r.tx, filled, distinct);
    tally.add(codes.codeKey(r.tx as unknown as Record<string, unknown>));
    silent.add(r.tx, source);
  };
  return {
    unreadable: 0,
    add(rec: RawRecord) {
      const expand = profile.expand;
      if (expand === undefined) {
        look(rec.fields);
        return one(rec.fields, rec.fields, rec.invalidUtf8 === true);
      }
      const views = expand.expand(rec.fields);
      if (!Array.isArray(views)) {
        mapped++;
        rejected++;
        rejectedBy.set('(record)', (rejectedBy.get('(record)') ?? 0) + 1);
        return;
      }
      expanded += views.length - 1;
      if (expand.id !== 'rule' && (views.length > 1 || expand.id === 'suffix')) suffixed += views.length;
      for (const v of views) {
        look(v as Record<string, unknown>);
        one(v as Record<string, unknown>, v as Record<string, unknown>, rec.invalidUtf8 === true);
      }
    },
    finish(file: string, seen: number, sample: number | undefined, strict: boolean) {
      const n = sample === undefined ? seen : Math.min(seen, sample);
      const lines = [
        // Counted as send counts: an unreadable piece (a ragged row, a line that is no JSON) is read and rejected.
        `${file}: ${sample === undefined ? `${seen + this.unreadable} records read` : `${n} of ${seen} records read, spread over the file`}${expanded > 0 ? ` (+${expanded} expanded)` : ''}, ${valid} valid, ${rejected + (sample === undefined ? this.unreadable : 0)} rejected${this.unreadable > 0 ? ` (${this.unreadable} unreadable)` : ''}`,
      ];
      if (profile.expand !== undefined) lines.push(suffixedLine(profile.expand.id, suffixed));
      if (rejectedBy.size > 0)
        lines.push(
          `  rejects by field: ${[...rejectedBy.entries()].map(([f, c]) => `${f} ${c}`).join(', ')} (map --mapping … shows each)`,
        );
      const missing: Array<(typeof profile.columns)[number]> = [];
      if (ndjson && looked > 0) {
        // As for a CSV header: a required field's path (no default) that no record has is an error, any other a
        // warning (an error under --strict); a draft's "?" is never found.
        const absent = uses.filter((u) => u.found === 0);
        for (const u of absent) if (u.use.required || strict) missing.push(u.use);
        const partial = uses.filter((u) => u.found > 0 && u.found < looked);
        lines.push(
          `  ${uses.length - absent.length} of ${uses.length} paths found in some record${partial.length > 0 ? `; in some of the ${looked} only: ${partial.map((u) => `${u.use.column} ${u.found}`).join(', ')}` : ''}`,
        );
        this.absent = absent.filter((u) => !u.use.required && !strict).map((u) => u.use);
      }
      lines.push(...perFieldLines(filled, distinct, valid));
      const state = silent.end();
      const ambiguous = ambiguousTimes(profile, state);
      if (ambiguous !== undefined)
        lines.push(`  ${ambiguousText(ambiguous)}${byField(TIME_READS, repeated0)}`);
      for (const note of silentNotes(state)) lines.push(`  ${note}`);
      const warnings = [
        ...unknownCodeLines(tally.counts(), valid),
        ...silentWarnings(profile, state),
        ...(this.absent ?? []).map(
          (u) => `no record has anything at ${JSON.stringify(u.column)} named by ${u.rule}`,
        ),
      ];
      void mapped;
      return { lines, warnings, missing };
    },
    absent: undefined as Array<(typeof profile.columns)[number]> | undefined,
  };
}

/** How many ids `expand` suffixed, in words. */
function suffixedLine(id: string, suffixed: number): string {
  const why = id === 'auto' ? ': records with several notifications' : '';
  return `  ${suffixed} id${suffixed === 1 ? '' : 's'} suffixed with the element's position ("expand.id": "${id}"${why}); the others keep the record's id`;
}

/** ` (transactionTimestamp 3, …)`: the ambiguous local times per field since `before`, or nothing. */
function byField(reads: { repeatedByField: Record<string, number> }, before: Record<string, number>): string {
  const parts = Object.entries(reads.repeatedByField)
    .map(([f, c]) => `${f} ${c - (before[f] ?? 0)}`)
    .filter((t) => !t.endsWith(' 0'));
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** Counts a valid transaction's filled fields and (up to DISTINCT_CAP + 1) their distinct values. */
function countFields(
  tx: TransactionNotification,
  filled: Map<string, number>,
  distinct: Map<string, Set<unknown>>,
): void {
  for (const [f, v] of Object.entries(tx)) {
    if (v === undefined) continue;
    filled.set(f, (filled.get(f) ?? 0) + 1);
    const d = distinct.get(f) ?? new Set<unknown>();
    if (d.size === 0) distinct.set(f, d);
    if (d.size <= DISTINCT_CAP) d.add(v);
  }
}

/** The report's per-field lines: records that filled each field, valid ones that did not, distinct values. */
function perFieldLines(
  filled: Map<string, number>,
  distinct: Map<string, Set<unknown>>,
  valid: number,
): string[] {
  const lines = ['  per field (filled, missing, distinct values):'];
  for (const f of Object.keys(Object.fromEntries(filled))) {
    const d = distinct.get(f)?.size ?? 0;
    const k = filled.get(f) ?? 0;
    lines.push(`    ${f}: ${k}, ${valid - k}, ${d > DISTINCT_CAP ? `${DISTINCT_CAP}+` : d}`);
  }
  return lines;
}

/** Each path of a profile once (several rules may name it), required when any of them needs it, with its reader. */
function pathUses(
  profile: CompiledProfile,
  compileGetter: typeof import('../map/path.ts').compileGetter,
  PathError: typeof import('../map/path.ts').PathError,
) {
  // A column's text has its escapes removed: one that no longer parses as a path is a key as it is.
  const readPath = (text: string) => {
    try {
      return compileGetter(text);
    } catch (err) {
      if (!(err instanceof PathError)) throw err;
      return (rec: Record<string, unknown>) => (Object.hasOwn(rec, text) ? rec[text] : undefined);
    }
  };
  const byColumn = new Map<string, (typeof profile.columns)[number]>();
  for (const u of profile.columns) if (!byColumn.get(u.column)?.required) byColumn.set(u.column, u);
  return [...byColumn.values()].map((u) => ({ use: u, get: readPath(u.column), found: 0 }));
}
