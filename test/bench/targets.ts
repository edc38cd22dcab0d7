// The performance targets (issue 14's table and the figures already met), judged from one bench run's medians.
import { fmtRows, type ScenarioResult } from './scenarios.ts';

/**
 * One row of the targets table: what was measured, against what, and whether it is met (null: not measured in
 * this run, or measured on a smaller input than the target names).
 * @example { figure: 'end to end, concurrency 8, 50 ms service: …', result: '0.912 (7,296 tx/s)', target: '>= 0.95', met: false }
 */
export interface TargetRow {
  figure: string;
  result: string;
  target: string;
  met: boolean | null;
}

const SEND_ROWS = 1_000_000;

function range(r: ScenarioResult, key: string, digits = 3): string {
  const xs = r.runs.map((x) => x[key]).filter((v): v is number => typeof v === 'number');
  if (xs.length < 2) return '';
  return `; runs ${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
}

function loads(r: ScenarioResult): string {
  const xs = r.runs.map((x) => x.load1).filter((v): v is number => typeof v === 'number');
  return xs.length ? `load ${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}` : '';
}

/** Rows for every target whose scenario ran (the others say "not run"). */
export function targetRows(results: ScenarioResult[]): TargetRow[] {
  const by = (n: string) => results.find((r) => r.name === n);
  const rows: TargetRow[] = [];
  const notRun = (figure: string, target: string, what: string) =>
    rows.push({ figure, result: `not run (${what})`, target, met: null });

  const c8 = by('e2e-c8');
  const c32 = by('e2e-c32');
  {
    const figure = 'end to end, concurrency 8, 50 ms service: delivered tx/s ÷ (8 × 50 / 0.05 s)';
    if (c8) {
      const m = c8.median;
      rows.push({
        figure,
        result: `${m.ratio?.toFixed(3)} (${Math.round(m.txPerSec ?? 0)} tx/s${range(c8, 'ratio')}; ${loads(c8)})`,
        target: '>= 0.95',
        met: (m.ratio ?? 0) >= 0.95,
      });
    } else notRun(figure, '>= 0.95', '--only e2e-c8');
  }
  {
    const figure =
      'our CPU per delivered transaction, concurrency 32 (user+sys of all threads ÷ transactions)';
    if (c32) {
      const m = c32.median;
      rows.push({
        figure,
        result: `${m.cpuUsPerTx?.toFixed(1)} µs (user ${m.userUsPerTx?.toFixed(1)}, sys ${m.sysUsPerTx?.toFixed(1)}${range(c32, 'cpuUsPerTx', 1)}); simulator ${m.simCpuUsPerTx?.toFixed(1)} µs in the same runs; ratio ${m.ratio?.toFixed(3)}; ${loads(c32)}`,
        target: '<= 30 µs',
        met: (m.cpuUsPerTx ?? Infinity) <= 30,
      });
    } else notRun(figure, '<= 30 µs', '--only e2e-c32');
  }
  for (const [dry, ml, want, label] of [
    ['dry-canonical-csv', 'miller-canonical-csv', 1, 'dry run, canonical CSV: rows/s vs Miller'],
    [
      'dry-northwind-csv',
      'miller-northwind-csv',
      0.6,
      'dry run, Northwind profile (25 columns → 34 fields) vs Miller',
    ],
  ] as const) {
    const d = by(dry);
    const m = by(ml);
    const target = `>= ×${want.toFixed(1)} (rows/s, same file and cores)`;
    if (!d) notRun(label, target, `--only ${dry}`);
    else if (!m)
      rows.push({ figure: label, result: 'Miller not installed: no comparison', target, met: null });
    else {
      const wall = d.median.rowsPerSec! / m.median.rowsPerSec!;
      const cpu = d.median.rowsPerCpuSec! / m.median.rowsPerCpuSec!;
      rows.push({
        figure: label,
        result: `×${wall.toFixed(2)} (${d.median.rowsPerSec} vs ${m.median.rowsPerSec} rows/s; per CPU-s ×${cpu.toFixed(2)}; ${loads(d)})`,
        target,
        met: wall >= want,
      });
    }
  }
  {
    const figure = `peak RSS while sending ${fmtRows(SEND_ROWS)} rows, concurrency 8 / 32`;
    const target = '<= 150 / 200 MB';
    if (!c8 && !c32) notRun(figure, target, '--only e2e');
    else {
      const rss = (r: ScenarioResult | undefined) => (r ? `${r.median.maxRssMb} MB` : 'not run');
      const full = [c8, c32].every((r) => r === undefined || r.rows >= SEND_ROWS);
      const ok = (c8 ? c8.median.maxRssMb! <= 150 : true) && (c32 ? c32.median.maxRssMb! <= 200 : true);
      rows.push({
        figure,
        result: `${rss(c8)} / ${rss(c32)}${full ? '' : ` (input ${fmtRows((c8 ?? c32)!.rows)} rows, not ${fmtRows(SEND_ROWS)})`}`,
        target,
        met: full && c8 !== undefined && c32 !== undefined ? ok : ok ? null : false,
      });
    }
  }
  {
    const figure = 'event-loop delay p99 while sending at concurrency 32';
    if (c32) {
      rows.push({
        figure,
        result: `${c32.median.loopP99Ms?.toFixed(1)} ms (max ${c32.median.loopMaxMs?.toFixed(0)} ms)`,
        target: '<= 20 ms',
        met: (c32.median.loopP99Ms ?? Infinity) <= 20,
      });
    } else notRun(figure, '<= 20 ms', '--only e2e-c32');
  }
  const mems = results.filter((r) => r.group === 'mem').sort((x, y) => x.rows - y.rows);
  {
    const figure = 'memory flat: dry run of rows on stdin, peak RSS';
    const target = '<= 150 MB, largest <= 1.2 × smallest';
    if (mems.length === 0) notRun(figure, target, '--only mem');
    else {
      const small = mems[0]!;
      const big = mems.at(-1)!;
      const growth = big.median.maxRssMb! / small.median.maxRssMb!;
      rows.push({
        figure: `${figure} (${mems.map((r) => fmtRows(r.rows)).join(', ')})`,
        result: `${mems.map((r) => `${r.median.maxRssMb} MB`).join(', ')} (×${growth.toFixed(2)})`,
        target,
        met: mems.every((r) => r.median.maxRssMb! <= 150) && growth <= 1.2,
      });
      rows.push({
        figure: `longest event-loop pause, dry run of ${fmtRows(big.rows)} rows (duplicate-set merges)`,
        result: `${big.median.loopMaxMs?.toFixed(0)} ms`,
        target: '<= 100 ms',
        met: (big.median.loopMaxMs ?? Infinity) <= 100,
      });
    }
  }
  const resumes = results.filter((r) => r.group === 'resume');
  if (resumes.length === 0)
    notRun('resume: peak RSS against a ledger of acked ids', '<= 300 MB', '--only resume');
  for (const r of resumes) {
    const m = r.median;
    rows.push({
      figure: `resume: ledger of ${r.name.replace('resume-', '')} acked ids, 100k-row input half in it`,
      result: `${m.maxRssMb} MB, start-up ${((m.startupMs ?? Number.NaN) / 1000).toFixed(1)} s, skipped ${m.skipped}, ${m.correct === 1 ? 'exact' : 'NOT exact'} (runs ${r.runs.length})`,
      target: '<= 300 MB, every overlapping id skipped and no other',
      met: (m.maxRssMb ?? Infinity) <= 300 && m.correct === 1,
    });
  }
  return rows;
}

/** The targets as a Markdown table. */
export function formatTargets(rows: TargetRow[]): string {
  const head = ['figure', 'result', 'target', 'met'];
  const cells = rows.map((r) => [
    r.figure,
    r.result,
    r.target,
    r.met === null ? '-' : r.met ? 'met' : 'MISSED',
  ]);
  const widths = head.map((h, k) => Math.max(h.length, ...cells.map((c) => (c[k] ?? '').length)));
  const line = (c: string[]) => `| ${c.map((x, k) => x.padEnd(widths[k]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}
