// Issue 50, Must 5: `expand` keeps the processor's id when a record yields one notification and suffixes the
// element's position only when it yields several ("id": "auto", the default); "suffix" always, "rule" never;
// `mapping check` says how many ids were suffixed.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileProfile } from '../../src/map/compile.ts';
import { runCliHere } from '../helpers/cli.ts';
import { CONST_RULES } from '../helpers/profiles.ts';

const doc = (id?: string) => ({
  expand: { from: 'elements', where: { type: ['settlement', 'refund'] }, ...(id ? { id } : {}) },
  fields: {
    ...CONST_RULES,
    transactionId: 'id',
    postedAmount: { from: 'element.amount', amount: { units: 'minor' } },
  },
});
const one = {
  id: 'pay_1',
  elements: [
    { type: 'hold', amount: 5 },
    { type: 'settlement', amount: 100 },
  ],
};
const two = {
  id: 'pay_2',
  elements: [{ type: 'settlement', amount: 100 }, { type: 'fee' }, { type: 'refund', amount: 40 }],
};

function ids(id?: string): string[] {
  const p = compileProfile(doc(id), 'p.json', 'p');
  const out: string[] = [];
  for (const rec of [one, two]) {
    const views = p.expand?.expand(rec as Record<string, unknown>);
    if (!Array.isArray(views)) throw new Error('no views');
    for (const v of views) {
      const r = p.map(v as Record<string, unknown>);
      if (r.ok) out.push(r.tx.transactionId);
    }
  }
  return out;
}

describe('expand ids', () => {
  it('auto (the default): one notification keeps the id, several are suffixed with their positions', () => {
    expect(ids()).toEqual(['pay_1', 'pay_2:0', 'pay_2:2']);
    expect(ids('auto')).toEqual(['pay_1', 'pay_2:0', 'pay_2:2']);
  });

  it('"suffix" suffixes every one, "rule" none', () => {
    expect(ids('suffix')).toEqual(['pay_1:1', 'pay_2:0', 'pay_2:2']);
    expect(ids('rule')).toEqual(['pay_1', 'pay_2', 'pay_2']);
  });

  it('mapping check says how many ids were suffixed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-expand-ids-'));
    const file = join(dir, 'x.ndjson');
    await writeFile(file, `${JSON.stringify(one)}\n${JSON.stringify(two)}\n`);
    const profile = join(dir, 'p.json');
    await writeFile(profile, JSON.stringify(doc()));
    const r = await runCliHere(['mapping', 'check', profile, file]);
    expect(r.stdout).toContain(
      `2 ids suffixed with the element's position ("expand.id": "auto": records with several notifications); the others keep the record's id`,
    );
  });
});
