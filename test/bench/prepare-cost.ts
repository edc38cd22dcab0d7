// CPU per record of prepareInput (read → map → validate → JSON) for one checkout and one profile, in a process of its
// own, to set two checkouts side by side (run them alternately):
//   node test/bench/prepare-cost.ts ROOT PROFILE FILE   e.g.  . northwind-csv test/bench/.data/northwind-200k.csv
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [rootArg, mapping, file] = process.argv.slice(2) as [string, string, string];
const root = resolve(rootArg);
const at = (rel: string) => pathToFileURL(`${root}/src/${rel}`).href;
const { loadProfile } = await import(at('map/profile.ts'));
const { resolveInputs } = await import(at('read/open.ts'));
const { prepareInput } = await import(at('prepare/prepare.ts'));
const profile = await loadProfile(mapping === 'canonical' ? undefined : mapping);
const [spec] = await resolveInputs([file], {});
// A checkout with the warnings' counts (issue 31) counts them as send does; an older one has none.
let silent: unknown;
try {
  silent = (await import(at('map/silent-errors.ts'))).createSilentErrors(profile);
} catch {
  silent = undefined;
}
const t0 = process.cpuUsage();
let n = 0;
for await (const items of prepareInput(spec, profile, { delimiter: profile.delimiter ?? ',' }, silent))
  n += items.length;
const u = process.cpuUsage(t0);
console.log(
  JSON.stringify({ root, mapping, records: n, usPerRecord: +((u.user + u.system) / n).toFixed(3) }),
);
