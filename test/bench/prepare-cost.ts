// CPU per record of prepareInput (read → map → validate → JSON) for one checkout and one profile, in a process of its
// own, to set two checkouts side by side (run them alternately):
//   node test/bench/prepare-cost.ts ROOT PROFILE FILE   e.g.  . northwind-csv test/bench/.data/northwind-200k.csv
import { preparePath } from './prepare-path.ts';

const [rootArg, mapping, file] = process.argv.slice(2) as [string, string, string];
const { root, run } = await preparePath(rootArg, mapping, file);
const t0 = process.cpuUsage();
let n = 0;
for await (const items of run()) n += items.length;
const u = process.cpuUsage(t0);
console.log(
  JSON.stringify({ root, mapping, records: n, usPerRecord: +((u.user + u.system) / n).toFixed(3) }),
);
