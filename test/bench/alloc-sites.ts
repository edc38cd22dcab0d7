// What prepareInput (read → map → validate → JSON) allocates a record, by allocation site, for one checkout and one
// profile: V8's sampling heap profiler with the objects the collector already took counted too (garbage is what a
// scavenge costs), in a process of its own. Run it on two checkouts to see which objects a change took away:
//   node test/bench/alloc-sites.ts ROOT PROFILE FILE [TOP]   e.g.  . canonical test/bench/.data/canonical-200k.csv
import { Session } from 'node:inspector/promises';
import { preparePath } from './prepare-path.ts';

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampleNode[];
}

const [rootArg, mapping, file, topArg] = process.argv.slice(2) as [string, string, string, string?];
const { root, run } = await preparePath(rootArg, mapping, file);

const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 4096,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
let records = 0;
for await (const items of run()) records += items.length;
const { profile: sampled } = (await session.post('HeapProfiler.stopSampling')) as {
  profile: { head: SampleNode };
};
session.disconnect();

const bySite = new Map<string, number>();
let total = 0;
const walk = (node: SampleNode): void => {
  const f = node.callFrame;
  const url = f.url
    .replace(/^file:\/\//, '')
    .replace(`${root}/`, '')
    .replace(/.*node_modules\//, '');
  const site = `${f.functionName || '(anonymous)'} ${url}:${f.lineNumber + 1}`;
  bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  total += node.selfSize;
  for (const c of node.children) walk(c);
};
walk(sampled.head);
console.log(JSON.stringify({ root, mapping, records, bytesPerRecord: Math.round(total / records) }));
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 12)))
  console.log(`${String(Math.round(bytes / records)).padStart(7)} B  ${site}`);
