// One version in every place a release bumps (docs/install.md, "Versions, commits and releases"): package.json,
// src/version.ts, the User-Agent default and the tag of the image the CronJob names; and `--version` from the clone
// names the commit git reports for it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitCommit, VERSION, versionLine } from '../../src/version.ts';
import { ROOT } from '../helpers/cli.ts';

describe('the version', () => {
  it('is the same in package.json, src/version.ts, the User-Agent and the CronJob’s image tag', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
    const config = JSON.parse(await readFile(join(ROOT, 'config/default.json'), 'utf8')) as {
      userAgent: string;
    };
    expect(config.userAgent).toBe(`svc-ingest/${VERSION}`);
    const cronjob = await readFile(join(ROOT, 'deploy/kubernetes/svc-ingest-cronjob.yaml'), 'utf8');
    expect(cronjob).toMatch(
      new RegExp(`^\\s+image: \\S+/svc-ingest:${VERSION.replaceAll('.', '\\.')}$`, 'm'),
    );
  });

  it('names the clone’s commit, as git says it', () => {
    const commit = gitCommit(ROOT);
    expect(commit).toMatch(/^[0-9a-f]{7}(-dirty)?$/);
    expect(versionLine()).toBe(`${VERSION} (${commit})`);
  });
});
