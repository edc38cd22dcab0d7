// One way each (docs/architecture.md): a command ends with its own exit status through exitWith (src/errors.ts),
// never by setting it; one sleep (src/sleep.ts); every wait or retry loop goes through send/retried.ts or its file
// says why not ("Not send/retried.ts: …"); V8's flags are set in src/runtime/ only.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

const ALL = sources(join(ROOT, 'src')).map((f) => ({
  rel: relative(ROOT, f),
  text: readFileSync(f, 'utf8'),
}));
/** The tool's own code: the simulator plays the service, with its exits, waits and loops of its own. */
const FILES = ALL.filter((f) => !f.rel.startsWith('src/simulator/'));
const where = (re: RegExp, except: readonly string[] = [], files = FILES): string[] =>
  files.filter((f) => !except.includes(f.rel) && re.test(f.text)).map((f) => f.rel);

describe('one way each', () => {
  it('exit status: exitWith throws an ExitError; nothing sets an exit code but the bin entry', () => {
    expect(where(/new ExitError\(/, ['src/errors.ts'])).toEqual([]);
    expect(where(/\bexitCode\s*=[^=]/, ['src/errors.ts', 'src/cli/main.ts'])).toEqual([]);
    expect(where(/\bexitWith\(/).length).toBeGreaterThan(5);
  });

  it("one sleep: src/sleep.ts (the simulator's latency too)", () => {
    expect(
      where(
        /setTimeout as sleep|(const|function) sleep\b|new Promise\(\(\w+\) => setTimeout\(\w+, /,
        ['src/sleep.ts'],
        ALL,
      ),
    ).toEqual([]);
  });

  it('a loop that waits or retries goes through send/retried.ts, or its file says why not', () => {
    const loops = where(/\bpRetry\(|\bsleep\(/, ['src/send/retried.ts', 'src/sleep.ts']);
    expect(loops.length).toBeGreaterThan(0);
    const silent = loops.filter(
      (rel) => !FILES.find((f) => f.rel === rel)?.text.includes('Not send/retried.ts'),
    );
    expect(silent).toEqual([]);
  });

  it("V8's flags are set in src/runtime/ only", () => {
    const setters = where(/setFlagsFromString\(/);
    expect(setters.length).toBeGreaterThan(0);
    expect(setters.filter((rel) => !rel.startsWith('src/runtime/'))).toEqual([]);
  });
});
