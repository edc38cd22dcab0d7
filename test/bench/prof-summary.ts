// Summarizes V8 .cpuprofile files (node --cpu-prof): top functions by self time, and by file.
// As a script: `node test/bench/prof-summary.ts <file.cpuprofile|dir> [top]`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

/**
 * One row of the summary: a function (or file) and its share of the samples.
 * @example { name: 'validateTransaction src/validate/validate.ts:112', selfMs: 410, pct: 12.3 }
 */
export interface ProfileRow {
  name: string;
  selfMs: number;
  pct: number;
}

function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm !== -1) return path.slice(nm + 'node_modules/'.length);
  return path.startsWith('/') ? relative(process.cwd(), path) : path;
}

/** Self time per function and per file of one profile, biggest first. */
export function summarize(
  profile: CpuProfile,
  top = 25,
): { byFunction: ProfileRow[]; byFile: ProfileRow[]; totalMs: number } {
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let k = 0; k < samples.length; k++) {
    const id = samples[k] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[k + 1] ?? deltas[k] ?? 0));
  }
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    total += us;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? shortUrl(url) : '';
    const name = `${functionName || '(anonymous)'}${where ? ` ${where}:${lineNumber + 1}` : ''}`;
    fn.set(name, (fn.get(name) ?? 0) + us);
    const fileKey = where || functionName || '(native)';
    file.set(fileKey, (file.get(fileKey) ?? 0) + us);
  }
  const rows = (m: Map<string, number>): ProfileRow[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        selfMs: Math.round(us / 1000),
        pct: Math.round((1000 * us) / total) / 10,
      }));
  return { byFunction: rows(fn), byFile: rows(file), totalMs: Math.round(total / 1000) };
}

/** Where self time goes, by concern: [category, test on the frame's URL or function name]. First match wins. */
const CATEGORIES: Array<[string, (url: string, fn: string) => boolean]> = [
  ['GC', (_u, f) => f === '(garbage collector)'],
  ['idle', (_u, f) => f === '(idle)'],
  ['JSON (parse, stringify)', (u, f) => u === '' && (f === 'parse' || f === 'stringify')],
  ['read: csv-parse', (u) => u.includes('/csv-parse/')],
  ['read: src/read (CSV/NDJSON records, UTF-8)', (u) => u.includes('/src/read/')],
  ['map (src/map)', (u) => u.includes('/src/map/')],
  ['validate (src/validate)', (u) => u.includes('/src/validate/')],
  [
    'prepareRecords self (JSON.stringify of each transaction, the map/validate steps inlined into it)',
    (u, f) => f === 'prepareRecords' && u.includes('/src/prepare/'),
  ],
  [
    'prepare plumbing (pool, split, worker messages)',
    (u, f) => u.includes('/src/prepare/') || f === 'postMessage' || u === 'node:internal/worker',
  ],
  [
    'dedupe + resume index (fingerprints)',
    (u) =>
      u.includes('/src/sorted-runs/') ||
      u.includes('/src/dedupe/') ||
      /\/src\/ledger\/(file\/)?(fingerprint|acked-index)\.ts/.test(u),
  ],
  ['batching', (u) => u.includes('/src/batch/')],
  [
    'dispatcher, p-retry, p-limit',
    (u) =>
      u.includes('/src/send/') ||
      u.includes('/p-retry/') ||
      u.includes('/p-limit/') ||
      u.includes('/yocto-queue/'),
  ],
  ['ky', (u) => u.includes('/ky/')],
  [
    'transport (dispatch-fetch, undici, sockets)',
    (u, f) =>
      u.includes('/src/client/dispatch-fetch.ts') ||
      u.includes('/undici/') ||
      u.startsWith('wasm://') ||
      u === 'node:net' ||
      u === 'node:internal/stream_base_commons' ||
      f === 'writev' ||
      f === 'writeUtf8String',
  ],
  [
    'fetch objects (Request, Response, Headers, streams)',
    (u) =>
      u === 'node:internal/deps/undici/undici' ||
      u.startsWith('node:internal/webstreams/') ||
      u === 'node:internal/encoding',
  ],
  ['client (src/client)', (u) => u.includes('/src/client/')],
  [
    'ledger + rejects writes, recorder (write, fdatasync)',
    (u, f) =>
      u.includes('/src/ledger/') ||
      u.includes('/src/record/') ||
      f === 'fdatasync' ||
      f === 'writeBuffer' ||
      f === 'writeString',
  ],
  ['logging (pino)', (u) => u.includes('/pino') || u.includes('/src/log.ts') || u.includes('/sonic-boom/')],
  ['metrics', (u) => u.includes('/prom-client/') || u.includes('/src/metrics/')],
  ['chain (src/send-run.ts, src/chain/)', (u) => u.includes('/src/send-run.ts') || u.includes('/src/chain/')],
  [
    'signals, timers, promises',
    (u, f) =>
      u === 'node:internal/abort_controller' ||
      u === 'node:internal/timers' ||
      u === 'node:internal/process/task_queues' ||
      u === 'node:internal/event_target' ||
      f === 'runMicrotasks',
  ],
  [
    'start-up (module loading)',
    (u) =>
      u.startsWith('node:internal/modules/') ||
      u.includes('/amaro/') ||
      u === 'node:internal/bootstrap/realm' ||
      u.includes('/commander/'),
  ],
];

/**
 * Self time by concern (see CATEGORIES). A frame no rule names (a native such as fdatasync or utf8Slice, or one of
 * Node's own wrappers) counts for its nearest caller in our code or a package, so an fdatasync lands in the
 * ledger and a UTF-8 decode in the reader. Builtins called from JavaScript (JSON.stringify, Map.set) have no
 * frames: their time is their caller's self time.
 */
export function categorize(profile: CpuProfile): { rows: ProfileRow[]; totalMs: number; busyMs: number } {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const match = (n: ProfileNode): string | undefined => {
    const { url, functionName } = n.callFrame;
    for (const [name, test] of CATEGORIES) if (test(url, functionName)) return name;
    return undefined;
  };
  const categoryOf = (id: number): string => {
    const self = byId.get(id) as ProfileNode;
    const own = match(self);
    if (own) return own;
    // Up the stack to the first frame of ours or of a package (Node's own wrappers are skipped).
    for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur) as ProfileNode;
      const url = n.callFrame.url;
      if (url === '' || url.startsWith('node:')) continue;
      return match(n) ?? 'other';
    }
    return self.callFrame.url === '' ? 'other (VM)' : 'other (Node internals)';
  };
  const cache = new Map<number, string>();
  const us = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let total = 0;
  let idle = 0;
  for (let k = 0; k < samples.length; k++) {
    const id = samples[k] as number;
    let cat = cache.get(id);
    if (cat === undefined) {
      cat = categoryOf(id);
      cache.set(id, cat);
    }
    const d = deltas[k + 1] ?? deltas[k] ?? 0;
    total += d;
    if (cat === 'idle') idle += d;
    us.set(cat, (us.get(cat) ?? 0) + d);
  }
  const busy = total - idle;
  const rows = [...us]
    .filter(([c]) => c !== 'idle')
    .sort((a, b) => b[1] - a[1])
    .map(([name, t]) => ({ name, selfMs: Math.round(t / 1000), pct: Math.round((1000 * t) / busy) / 10 }));
  return { rows, totalMs: Math.round(total / 1000), busyMs: Math.round(busy / 1000) };
}

/** Profiles in a path (a file, or every .cpuprofile in a folder, main thread and workers). */
export function profileFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .map((f) => join(path, f));
}

/** A printable summary of every profile in a path: by concern, then the top functions and files. */
export function formatSummary(path: string, top = 25): string {
  let out = '';
  for (const f of profileFiles(path)) {
    const profile = JSON.parse(readFileSync(f, 'utf8')) as CpuProfile;
    const s = summarize(profile, top);
    // The launcher's own version check leaves a profile of a few ms: not worth a table.
    if (s.totalMs < 200) continue;
    const c = categorize(profile);
    // JSON.stringify and other builtins have no frames of their own: their time is their caller's self time.
    out += `\n${f}: ${s.totalMs} ms sampled, ${c.busyMs} ms busy\n  self ms    %  concern (% of busy)\n`;
    for (const r of c.rows)
      out += `  ${String(r.selfMs).padStart(7)} ${r.pct.toFixed(1).padStart(5)}  ${r.name}\n`;
    out += '  self ms    %  function\n';
    for (const r of s.byFunction)
      out += `  ${String(r.selfMs).padStart(7)} ${r.pct.toFixed(1).padStart(5)}  ${r.name}\n`;
    out += '  -- by file --\n';
    for (const r of s.byFile.slice(0, 12))
      out += `  ${String(r.selfMs).padStart(7)} ${r.pct.toFixed(1).padStart(5)}  ${r.name}\n`;
  }
  return out;
}

if (import.meta.main) {
  const [path, top] = process.argv.slice(2);
  if (!path) {
    process.stderr.write('usage: node test/bench/prof-summary.ts <file.cpuprofile|dir> [top]\n');
    process.exit(1);
  }
  process.stdout.write(formatSummary(path, Number(top ?? 25)));
}
