// CPU per value of `--only pan`'s work for the checkout at ROOT, in this process (not part of `make bench`): the
// false-positive kinds and random numbers through the validator, then the digit-context fuzz through masking. Run it
// alternately on two checkouts (a copy of the base commit made with `git archive`, its node_modules linked) to
// compare a change's cost without the bench's other noise: `node test/bench/pan-cost.ts ROOT [values a kind]`.
const root = process.argv[2];
const n = Number(process.argv[3] ?? 1_000_000);
const fp = await import(`${root}/test/helpers/false-positives.ts`);
const fz = await import(`${root}/test/helpers/digit-fuzz.ts`);
const mask = await import(`${root}/src/mask/index.ts`);
const cpu0 = process.cpuUsage();
let refused = 0;
for (const kind of [...fp.KINDS, fp.RANDOM_NUMBER]) refused += fp.refusals(kind, n).refused;
const c1 = process.cpuUsage(cpu0);
let leaks = 0;
for (const c of fz.digitFuzz(n / 10))
  if (fz.piecesLeft(mask.maskCardNumbers(c.text), c.cards).length > 0) leaks++;
const c2 = process.cpuUsage(cpu0);
const us = (c: NodeJS.CpuUsage) => c.user + c.system;
console.log(
  JSON.stringify({
    root,
    values: n * (fp.KINDS.length + 1),
    nsPerValue: Math.round((us(c1) * 1000) / (n * (fp.KINDS.length + 1))),
    fuzzNsPerCase: Math.round(((us(c2) - us(c1)) * 1000) / (n / 10)),
    refused,
    leaks,
  }),
);
