// A really full disk: the ledger on a 64 KiB tmpfs fills up mid-run (ENOSPC, after a short write). The run
// must stop like it does on EIO, and the crash bound must hold: accepted but unrecorded <= concurrency x batch.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, textOf, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import {
  deliveryCounts,
  FAST,
  idsWith,
  readLedgerBack,
  report,
  STACK,
  summary,
  workdir,
  writeNdjson,
} from './helpers.ts';

const sim = useSimulator({ seed: 23 }, 'reset');

/**
 * How this machine lets a test mount a small tmpfs: in a private mount namespace as root (`unshare -m`), in a
 * user namespace (`unshare -rm`), or plainly as root; null when none works (the test is then skipped, loudly).
 */
function mountPrefix(probeDir: string): string[] | null {
  const probe = `mount -t tmpfs -o size=64k tmpfs '${probeDir}' && umount '${probeDir}'`;
  for (const prefix of [['unshare', '-m'], ['unshare', '-rm'], []]) {
    try {
      execFileSync(prefix[0] ?? 'sh', [...prefix.slice(1), ...(prefix.length ? ['sh'] : []), '-c', probe], {
        stdio: 'ignore',
        timeout: 10_000,
      });
      return prefix;
    } catch {
      // try the next way
    }
  }
  return null;
}

/** Run a shell script (under the mount prefix), with the CLI's environment. */
function sh(prefix: string[], script: string, env: NodeJS.ProcessEnv): Promise<number | null> {
  const [cmd, ...args] = prefix.length > 0 ? [...prefix, 'sh', '-c', script] : ['sh', '-c', script];
  return new Promise((resolve) => {
    const child = spawn(cmd as string, args, {
      env: { ...process.env, SVC_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('close', (code) => resolve(code));
  });
}

describe('disk full', () => {
  it('ENOSPC mid-run on a 64 KiB tmpfs: exit 1, one line; unrecorded <= concurrency x batch; after space is freed a rerun resends only those', async (ctx) => {
    const w = await workdir('enospc');
    const mnt = join(w.dir, 'mnt');
    await mkdir(mnt);
    const prefix = mountPrefix(mnt);
    if (!prefix) {
      console.warn('SKIPPED disk-full test: this machine cannot mount a tmpfs (no root, no user namespaces)');
      ctx.skip();
      return;
    }
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, 10_000, 'nospace');
    sim.setFaults({ latencyMs: 5, jitterMs: 5 });
    const CONCURRENCY = 4;
    const out = (name: string) => join(w.dir, name);
    const send = (n: number) =>
      `'${BIN}' send ${FAST.join(' ')} --concurrency ${CONCURRENCY} --ledger '${mnt}/ledger.ndjson' '${file}' ` +
      `> '${out(`stdout${n}`)}' 2> '${out(`stderr${n}`)}'; echo $? > '${out(`code${n}`)}'; ` +
      `cp '${mnt}/ledger.ndjson' '${out(`ledger${n}`)}'; ls '${mnt}' > '${out(`ls${n}`)}'`;
    // Everything happens in one shell: in a private mount namespace the tmpfs lives as long as it does.
    const script = [
      `mount -t tmpfs -o size=64k,mode=0700 tmpfs '${mnt}'`,
      send(1),
      // The test reads what the service got from run 1, then lets the script go on.
      `touch '${out('ran1')}'`,
      `while [ ! -e '${out('go')}' ]; do sleep 0.05; done`,
      // The operator frees space (here: the file system grows), then runs the same command again.
      `mount -o remount,size=4m '${mnt}'`,
      send(2),
      prefix.length === 0 ? `umount '${mnt}'` : 'true',
    ].join(' && ');
    const shell = sh(prefix, script, { SVC_BASE_URL: sim.url, SVC_REJECTS_PATH: w.rejects });
    let shellCode: number | null | undefined;
    void shell.then((c) => {
      shellCode = c;
    });
    await waitFor(() => existsSync(out('ran1')) || shellCode !== undefined, undefined, 60_000);
    expect(existsSync(out('ran1')), 'the script stopped before run 1 ended').toBe(true);
    const delivered = [...sim.deliveries().keys()];
    await writeFile(out('go'), '');
    expect(await shell).toBe(0);

    const code1 = Number((await readFile(out('code1'), 'utf8')).trim());
    const stderr1 = textOf(await readFile(out('stderr1'), 'utf8'));
    expect(code1, stderr1).toBe(1);
    // --json (in FAST): stdout holds only the error object.
    const stdout1 = await readFile(out('stdout1'), 'utf8');
    expect(stdout1.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(stdout1).error).toMatchObject({ code: 'LEDGER_WRITE' });
    const lines = stderr1.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc-ingest: LEDGER_WRITE: cannot write ledger .*ledger\.ndjson: ENOSPC/);
    expect(stderr1).not.toMatch(STACK);
    // The owner file is removed even so.
    expect((await readFile(out('ls1'), 'utf8')).trim().split('\n')).toEqual(['ledger.ndjson']);

    const after1 = await readLedgerBack(out('ledger1'));
    const recorded = idsWith(after1.rows, 'acked');
    const unrecorded = delivered.filter((id) => !recorded.has(id));
    expect(recorded.size).toBeGreaterThan(0);
    expect(recorded.size).toBeLessThan(10_000);
    expect(unrecorded.length).toBeLessThanOrEqual(CONCURRENCY * 50);

    const code2 = Number((await readFile(out('code2'), 'utf8')).trim());
    const stdout2 = await readFile(out('stdout2'), 'utf8');
    expect(code2, await readFile(out('stderr2'), 'utf8')).toBe(0);
    const s2 = summary({ code: code2, signal: null, stdout: stdout2, stderr: '' });
    expect(s2).toMatchObject({
      read: 10_000,
      skipped: recorded.size,
      sent: 10_000 - recorded.size,
      failed: 0,
    });
    const d = deliveryCounts(sim, ids);
    expect(d.missing).toBe(0);
    expect(d.extra).toBe(unrecorded.length);
    expect(d.extra).toBeLessThanOrEqual(CONCURRENCY * 50);
    report('ledger: disk full (ENOSPC on a 64 KiB tmpfs)', {
      mountedWith: prefix.join(' ') || 'mount (root)',
      records: 10_000,
      ledgerLinesAtStop: after1.rows.length,
      tornLinesAtStop: after1.bad,
      deliveredUnrecorded: unrecorded.length,
      bound: CONCURRENCY * 50,
      rerunDuplicates: d.extra,
      rerunLedgerBadLines: s2.ledgerBadLines,
    });
  });
});
