// promtool (Debian's `prometheus` package) for the tests of deploy/prometheus/: installed by packaging/need.sh as the
// packaging targets install their tools (root with apt-get); where it cannot be, the test fails with the line saying
// what to install — never skipped. And the metrics textfile a run wrote, read as the series Prometheus would scrape.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './cli.ts';

let found = false;

/** The path of promtool, installed first when missing; throws a one-line reason when it cannot be. */
export function needPromtool(): string {
  const has = () => spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
  if (found) return 'promtool';
  found = has();
  if (found) return 'promtool';
  const r = spawnSync(join(ROOT, 'packaging/need.sh'), ['promtool:prometheus'], { encoding: 'utf8' });
  if (r.status !== 0 || !has())
    throw new Error(
      `promtool is missing and could not be installed (${(r.stderr || r.error?.message || '').trim()}): ` +
        'apt-get install prometheus (Debian/Ubuntu), or put promtool on PATH',
    );
  found = true;
  return 'promtool';
}

/**
 * Run promtool; its exit status and output together. Go's runtime on one thread and with a lazier collector: the
 * same evaluation and output, for ~25 % less CPU than its defaults on `test rules` (~2.2 s against ~2.9 s).
 */
export function promtool(args: string[]): { code: number | null; out: string } {
  const r = spawnSync(needPromtool(), args, {
    encoding: 'utf8',
    env: { ...process.env, GOMAXPROCS: '1', GOGC: '400' },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** One sample of a metrics textfile: its name (with _bucket/_sum/_count for a histogram), labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text-format file (the lines that are not comments). */
export function samplesOf(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** A series selector as promtool's input_series writes it. */
export function seriesOf(name: string, labels: Record<string, string>): string {
  const inner = Object.entries(labels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',');
  return `${name}{${inner}}`;
}

/** The metric names a PromQL expression reads (functions, keywords, label names and strings left out). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring']);
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .filter((m) => !/^\s*\(/.test(bare.slice(m.index + m[0].length)))
    .map((m) => m[0])
    .filter((t) => !keywords.has(t));
}
