// Control totals: the record count and amount total an export's producer declares — on the command line
// (--expect-count, --expect-total), in a control file beside the export (--control FILE), or in a trailer row the
// profile declares (map/control.ts) — compared with what was read. A file is checked before the first request
// (a pass that only reads); a stream as it ends. A mismatch names both figures (INPUT_CONTROL_TOTALS, exit 1).
import { readFile } from 'node:fs/promises';
import { SvcIngestError } from '../errors.ts';
import { type CompiledControl, defaultControl } from '../map/control.ts';
import type { CompiledProfile } from '../map/types.ts';
import { type InputSpec, type ReadOptions, readInput, readOnce, sourceName } from '../read/open.ts';
import type { RawRecord, ReadItem, RecordChunks } from '../read/types.ts';

/** An exact decimal: units × 10^-scale. */
interface Decimal {
  units: bigint;
  scale: number;
}

/** What a producer declares, and where it said so (for messages). */
export interface Declared {
  count?: number;
  total?: Decimal;
  /** Where each figure was declared, for messages: `--expect-count`, `control file x.ctl`, `the trailer (line 9)`. */
  countFrom: string;
  totalFrom: string;
}

/** The command line's and the control file's figures (send's flags). */
export interface ControlFlags {
  expectCount?: string;
  expectTotal?: string;
  controlFile?: string;
}

const DECIMAL = /^([+-]?)(\d+)(?:\.(\d*))?$/;

/** An amount as text or a JSON number ("1234.50", 1234.5, "-7"), exactly; undefined when it is none. */
function decimalOf(v: unknown): Decimal | undefined {
  const text =
    typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : '';
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const frac = m[3] ?? '';
  const units = BigInt(`${m[2]}${frac}`);
  return { units: m[1] === '-' ? -units : units, scale: frac.length };
}

function rescale(d: Decimal, scale: number): bigint {
  return d.units * 10n ** BigInt(scale - d.scale);
}

function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

function same(a: Decimal, b: Decimal): boolean {
  const scale = Math.max(a.scale, b.scale);
  return rescale(a, scale) === rescale(b, scale);
}

function text(d: Decimal): string {
  const neg = d.units < 0n;
  const digits = (neg ? -d.units : d.units).toString().padStart(d.scale + 1, '0');
  const int = digits.slice(0, digits.length - d.scale);
  const frac = d.scale > 0 ? `.${digits.slice(digits.length - d.scale)}` : '';
  return `${neg ? '-' : ''}${int}${frac}`;
}

/** Records read and their amounts summed (a record whose amount is not a number adds to `unreadable`). */
class Tally {
  count = 0;
  total: Decimal = { units: 0n, scale: 0 };
  unreadable = 0;
  add(rec: RawRecord | undefined, control: CompiledControl): void {
    this.count++;
    const d = rec === undefined ? undefined : decimalOf(control.amount(rec.fields));
    if (d === undefined) this.unreadable++;
    else this.total = add(this.total, d);
  }
  merge(t: Tally): void {
    this.count += t.count;
    this.total = add(this.total, t.total);
    this.unreadable += t.unreadable;
  }
}

function usage(message: string): SvcIngestError {
  return new SvcIngestError('USAGE_INVALID', message);
}

/** A control file: JSON `{"count": N, "total": "X"}`, or `count=N` / `total=X` lines (`#` comments). */
async function readControlFile(path: string): Promise<{ count?: unknown; total?: unknown }> {
  let body: string;
  try {
    body = await readFile(path, 'utf8');
  } catch (err) {
    throw new SvcIngestError(
      'INPUT_UNREADABLE',
      `cannot read the control file ${path}: ${(err as Error).message}`,
    );
  }
  if (body.trimStart().startsWith('{')) {
    try {
      return JSON.parse(body) as { count?: unknown; total?: unknown };
    } catch {
      throw usage(`control file ${path}: not valid JSON (expected {"count": N, "total": "X"})`);
    }
  }
  const out: Record<string, string> = {};
  for (const line of body.split(/\r?\n/)) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const eq = t.indexOf('=');
    const key = eq === -1 ? '' : t.slice(0, eq).trim();
    if (key !== 'count' && key !== 'total')
      throw usage(
        `control file ${path}: expected count=N and total=X lines, got ${JSON.stringify(t.slice(0, 40))}`,
      );
    out[key] = t.slice(eq + 1).trim();
  }
  return out;
}

function countOf(v: unknown, from: string): number | undefined {
  if (v === undefined) return undefined;
  const n =
    typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 0)
    throw usage(`${from}: the record count must be a whole number, got ${JSON.stringify(v)}`);
  return n;
}

function totalOf(v: unknown, from: string): Decimal | undefined {
  if (v === undefined) return undefined;
  const d = decimalOf(v);
  if (d === undefined)
    throw usage(`${from}: the amount total must be a decimal number, got ${JSON.stringify(v)}`);
  return d;
}

/** The run's declared figures: the control file's, the command line's over them; undefined when none. */
async function declaredOf(f: ControlFlags): Promise<Declared | undefined> {
  const file = f.controlFile === undefined ? {} : await readControlFile(f.controlFile);
  const fileFrom = `control file ${f.controlFile}`;
  const count = countOf(f.expectCount, '--expect-count') ?? countOf(file.count, fileFrom);
  const total = totalOf(f.expectTotal, '--expect-total') ?? totalOf(file.total, fileFrom);
  if (count === undefined && total === undefined) {
    if (f.controlFile !== undefined) throw usage(`${fileFrom}: holds neither count nor total`);
    return undefined;
  }
  return {
    count,
    total,
    countFrom: f.expectCount !== undefined ? '--expect-count' : fileFrom,
    totalFrom: f.expectTotal !== undefined ? '--expect-total' : fileFrom,
  };
}

/** The mismatches of `t` against `d`, each with both figures; empty when they agree. */
function mismatches(d: Declared, t: Tally, what: string): string[] {
  const out: string[] = [];
  if (d.count !== undefined && d.count !== t.count)
    out.push(`${what}: ${t.count} records read, ${d.countFrom} declares ${d.count}`);
  if (d.total !== undefined && (t.unreadable > 0 || !same(d.total, t.total)))
    out.push(
      `${what}: amount total read ${text(t.total)}${t.unreadable > 0 ? ` (${t.unreadable} records without a readable amount)` : ''}, ${d.totalFrom} declares ${text(d.total)}`,
    );
  return out;
}

function failure(lines: string[]): SvcIngestError {
  return new SvcIngestError('INPUT_CONTROL_TOTALS', `control totals disagree: ${lines.join('; ')}`);
}

/** The trailer's figures, read from its row. */
function trailerFigures(rec: RawRecord, control: CompiledControl, source: string): Declared {
  const t = control.trailer!;
  const from = `the trailer (line ${rec.line})`;
  return {
    count: countOf(t.count(rec.fields), `${source}: ${from}, column ${t.countColumn}`),
    total:
      t.total === undefined
        ? undefined
        : totalOf(t.total(rec.fields), `${source}: ${from}, column ${t.totalColumn}`),
    countFrom: from,
    totalFrom: from,
  };
}

/**
 * One input's raw chunks counted and summed; with a trailer declared, the last record is held back until the
 * input ends and, when it is the trailer (its marker, if any, matches), never handed on: `onTrailer` gets its
 * figures, or null when the input has none.
 */
async function* tallied(
  chunks: RecordChunks,
  control: CompiledControl,
  tally: Tally,
  onTrailer: (d: Declared | null) => void,
  source: string,
): RecordChunks {
  let held: ReadItem | undefined;
  const count = (it: ReadItem) => tally.add(it.kind === 'record' ? it.record : undefined, control);
  try {
    for await (const items of chunks) {
      if (control.trailer === undefined) {
        for (const it of items) count(it);
        yield items;
        continue;
      }
      if (items.length === 0) continue;
      const out = held === undefined ? [] : [held];
      for (let i = 0; i < items.length - 1; i++) out.push(items[i] as ReadItem);
      held = items[items.length - 1];
      for (const it of out) count(it);
      if (out.length > 0) yield out;
    }
  } catch (err) {
    // The input broke (read/broken.ts): the record held back is no trailer; it goes on, so it is accounted for.
    if (held !== undefined) yield [held];
    throw err;
  }
  if (control.trailer === undefined) return;
  const w = control.trailer.when;
  const last = held?.kind === 'record' ? held.record : undefined;
  if (last !== undefined && (w === undefined || String(w.get(last.fields) ?? '') === w.equals)) {
    onTrailer(trailerFigures(last, control, source));
    return;
  }
  onTrailer(null);
  if (held !== undefined) {
    count(held);
    yield [held];
  }
}

/** A run's control totals: declared figures, per-input trailers, what was read. */
export interface ControlTotals {
  /** The reader's hook (ReadOptions.tap) for one input. */
  tap(spec: InputSpec): (chunks: RecordChunks) => RecordChunks;
  /** Every file input read once (nothing mapped, nothing sent) and checked; throws INPUT_CONTROL_TOTALS. */
  precheck(specs: InputSpec[], read: ReadOptions): Promise<void>;
  /** After a run that read every input: the mismatches found (streams), as the summary's `error`. */
  finish(): { code: string; message: string } | undefined;
}

/**
 * The run's control totals, or undefined when nothing is declared (no flag, no control file, no trailer in the
 * profile): then nothing is read twice and nothing is held back.
 * @example const totals = await controlTotals({ expectCount: '20000' }, profile)
 */
export async function controlTotals(
  f: ControlFlags,
  profile: CompiledProfile,
): Promise<ControlTotals | undefined> {
  const declared = await declaredOf(f);
  const control = profile.control ?? defaultControl(profile.columns);
  if (declared === undefined && control.trailer === undefined) return undefined;
  let run = new Tally();
  const trailers: Array<{ source: string; tally: Tally; d: Declared | null }> = [];
  const check = (found: Tally, list: typeof trailers): string[] => {
    const lines: string[] = [];
    for (const t of list)
      if (t.d === null)
        lines.push(`${t.source}: no trailer row (the profile declares one): the export may be cut short`);
      else lines.push(...mismatches(t.d, t.tally, t.source));
    if (declared !== undefined) lines.push(...mismatches(declared, found, 'the run'));
    return lines;
  };
  const tapOf = (spec: InputSpec, into: Tally, list: typeof trailers) => (chunks: RecordChunks) => {
    const source = sourceName(spec);
    const own = new Tally();
    const entry = { source, tally: own, d: null as Declared | null };
    return (async function* () {
      yield* tallied(
        chunks,
        control,
        own,
        (d) => {
          entry.d = d;
          list.push(entry);
        },
        source,
      );
      into.merge(own);
    })();
  };
  return {
    tap: (spec) => tapOf(spec, run, trailers),
    async precheck(specs, read) {
      const files = specs.filter((s) => !readOnce(s));
      if (files.length === 0) return;
      const found = new Tally();
      const list: typeof trailers = [];
      for (const spec of files)
        for await (const _ of readInput(spec, { ...read, tap: tapOf(spec, found, list) })) {
          // counted by the tap
        }
      // The run's declared figures are checked here only when every input is a file.
      const lines = check(found, list).filter(
        (l) => !l.startsWith('the run') || files.length === specs.length,
      );
      if (lines.length > 0) throw failure(lines);
      run = new Tally();
    },
    finish() {
      const lines = check(run, trailers);
      return lines.length === 0
        ? undefined
        : { code: 'INPUT_CONTROL_TOTALS', message: failure(lines).message };
    },
  };
}
