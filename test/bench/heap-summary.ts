// Summarizes a V8 heap snapshot (.heapsnapshot, e.g. from `--heapsnapshot-signal=SIGUSR2`): self size by node type
// and constructor name, biggest first, so "what holds the memory" has an answer without a browser.
// As a script: `node test/bench/heap-summary.ts <file.heapsnapshot> [top]`.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/**
 * One row: a (type, name) group of heap objects, their count and summed self size.
 * @example { type: 'string', name: '(strings)', count: 120344, selfMb: 14.2 }
 */
export interface HeapRow {
  type: string;
  name: string;
  count: number;
  selfMb: number;
}

export function summarizeHeap(s: Snapshot, top = 30): { rows: HeapRow[]; totalMb: number } {
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const types = s.snapshot.meta.node_types[0];
  const groups = new Map<string, HeapRow>();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt] as number] ?? '?';
    const size = s.nodes[i + sizeAt] as number;
    total += size;
    // Strings and numbers are grouped by type (their "name" is the value itself).
    const name =
      type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'number'
        ? `(${type})`
        : (s.strings[s.nodes[i + nameAt] as number] ?? '?').slice(0, 60);
    const key = `${type}\u0000${name}`;
    let g = groups.get(key);
    if (!g) {
      g = { type, name, count: 0, selfMb: 0 };
      groups.set(key, g);
    }
    g.count++;
    g.selfMb += size;
  }
  const rows = [...groups.values()]
    .sort((a, b) => b.selfMb - a.selfMb)
    .slice(0, top)
    .map((g) => ({ ...g, selfMb: Math.round(g.selfMb / 1e4) / 100 }));
  return { rows, totalMb: Math.round(total / 1e4) / 100 };
}

if (import.meta.main) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node test/bench/heap-summary.ts <file.heapsnapshot> [top]\n');
    process.exit(1);
  }
  const { rows, totalMb } = summarizeHeap(
    JSON.parse(readFileSync(file, 'utf8')) as Snapshot,
    Number(top ?? 30),
  );
  process.stdout.write(`${file}: ${totalMb} MB in the heap\n     MB    count  type / constructor\n`);
  for (const r of rows)
    process.stdout.write(
      `${r.selfMb.toFixed(2).padStart(7)} ${String(r.count).padStart(8)}  ${r.type} ${r.name}\n`,
    );
}
