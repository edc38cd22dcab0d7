// Summarizes V8 .cpuprofile files (node --cpu-prof): top functions by self time, and by file.
// As a script: `node test/bench/prof-summary.ts <file.cpuprofile|dir> [top]`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
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

/** Profiles in a path (a file, or every .cpuprofile in a folder, main thread and workers). */
export function profileFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .map((f) => join(path, f));
}

/** A printable summary of every profile in a path. */
export function formatSummary(path: string, top = 25): string {
  let out = '';
  for (const f of profileFiles(path)) {
    const s = summarize(JSON.parse(readFileSync(f, 'utf8')) as CpuProfile, top);
    // The launcher's own version check leaves a profile of a few ms: not worth a table.
    if (s.totalMs < 200) continue;
    out += `\n${f}: ${s.totalMs} ms sampled\n  self ms    %  function\n`;
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
