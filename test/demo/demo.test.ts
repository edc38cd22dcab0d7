// `make demo` (src/cli/demo.ts) end to end, in a temp folder: every sample sent, the ticket round trip, and the
// support answers it ends with — a reconcile with matched rewards, a pending one and an unmatched one, and traces.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { collectOutput, ROOT } from '../helpers/cli.ts';

it('ends with a reconcile and traces showing rewards paid, pending, unmatched, disputed, rejected and never read', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-demo-'));
  const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    // The project's own Node (>= 22.18: it runs the TypeScript as is), as `make demo` does after `make setup`.
    const node = existsSync(join(ROOT, 'node_modules/node/bin/node'))
      ? join(ROOT, 'node_modules/node/bin/node')
      : process.execPath;
    const child = spawn(node, [join(ROOT, 'src/cli/demo.ts')], {
      cwd: ROOT,
      env: { ...process.env, SVC_DEMO_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    void collectOutput(child).closed.then(resolve);
  });
  expect(out.code, out.stdout).toBe(0);
  const s = out.stdout;
  expect(s).toContain('tickets listen --until-closed DEMO-1: exit 0');
  expect(s).toMatch(
    /^total: 2 customer\(s\), 5 redemption\(s\), 4 matched, 1 unmatched, 4 paid, 1 pending;/m,
  );
  expect(s).toMatch(/transaction pos-2025-0999 .*UNMATCHED: unknown to the ledger/);
  expect(s).toMatch(/transaction NW20251011 .*reward PENDING/);
  expect(s).toMatch(/^can-csv-0001: REWARD-PAID \(exit 0\)/m);
  expect(s).toMatch(/^NW20251011: REWARD-PENDING \(exit 6\)/m);
  expect(s).toMatch(/^7000001: DISPUTED \(exit 8\)/m);
  expect(s).toMatch(/^can-csv-0005: REJECTED \(exit 2\)/m);
  expect(s).toMatch(/^never-sent-0001: NOT-READ \(exit 4\)/m);
}, 120_000);
