// `send --check-first`: the whole input is mapped before the first request, and a mapping that warns (a probably
// wrong profile: docs/mapping.md, "Warnings") stops the run before anything is sent, exit 1 with the warnings.
// Standard input is spooled to a private temporary file first (mode 0600 in a 0700 folder, removed at the end) so
// the run reads the very records that were checked.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { EXIT } from '../errors.ts';
import { cliIo } from '../io.ts';
import { stderrLine } from '../log.ts';
import { maskCardNumbers } from '../mask/index.ts';
import type { InputFormat } from '../model/input.ts';

/** What `send` needs of its flags to check its input first. */
export interface CheckFirstOptions {
  mapping?: string;
  format?: InputFormat | 'pgtext';
  delimiter?: string;
  sourceName?: string;
  strict?: boolean;
  /** How to prepare the records (inline: the check keeps nothing, and needs no threads). */
  pool: import('../prepare/choose.ts').PoolChoice;
}

/**
 * The gate's verdict: `exit` set when the run must not send (the warnings were printed); else `stdin`, the spooled
 * copy of standard input for the run to read as its standard input (still a stream to it: a last record cut short
 * is refused as without the gate), and `cleanup` to call at the end.
 * @example const g = await checkFirst(['-'], o); if (g.exit !== undefined) return g.exit;
 */
export interface CheckFirstResult {
  exit?: number;
  stdin?: NodeJS.ReadableStream;
  cleanup: () => Promise<void>;
}

/** Spool standard input into a private temporary file; returns its path and the folder to remove. */
async function spoolStdin(): Promise<{ file: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-ingest-check-first-'));
  const file = join(dir, 'stdin');
  await pipeline(cliIo().stdin, createWriteStream(file, { mode: 0o600, flags: 'wx' }));
  return { file, dir };
}

/**
 * Map every record of `paths` as send would (columns, mapping, validation) and collect the mapping's warnings.
 * @example const warnings = await mappingWarnings(['a.csv'], { mapping: 'lithic' })
 */
export async function mappingWarnings(paths: string[], o: CheckFirstOptions): Promise<string[]> {
  const [{ loadProfile }, { openInputs }, { prepareChunks }, { createSilentErrors, silentWarnings }] =
    await Promise.all([
      import('../map/profile.ts'),
      import('../prepare/inputs.ts'),
      import('../prepare/choose.ts'),
      import('../map/silent-errors.ts'),
    ]);
  const profile = await loadProfile(o.mapping);
  // A header's missing optional column is warned of by the run itself, as without the gate.
  const inputs = await openInputs(paths, profile, {
    format: o.format,
    delimiter: o.delimiter,
    ...(o.sourceName !== undefined ? { sourceName: o.sourceName } : {}),
    strict: Boolean(o.strict),
    warn: () => {},
  });
  const silent = createSilentErrors(profile);
  for (const spec of inputs.specs) {
    const chunks = prepareChunks(
      spec,
      profile,
      {
        mapping: o.mapping,
        delimiter: inputs.delimiter,
        columns: inputs.headers.get(spec),
        pool: o.pool,
      },
      silent,
    );
    for await (const _ of chunks) {
      // Mapped and counted; nothing kept.
    }
  }
  return silentWarnings(profile, silent.end());
}

/**
 * Check the whole input before sending: exit 1 with each warning when the mapping warns.
 * @example const gate = await checkFirst(paths, { mapping: 'northwind-csv' })
 */
export async function checkFirst(paths: string[], o: CheckFirstOptions): Promise<CheckFirstResult> {
  let spooled: { file: string; dir: string } | undefined;
  const cleanup = async () => {
    if (spooled !== undefined) await rm(spooled.dir, { recursive: true, force: true });
  };
  if (paths.includes('-')) spooled = await spoolStdin();
  const checked = paths.map((p) => (p === '-' && spooled !== undefined ? spooled.file : p));
  const sourceName = o.sourceName ?? (spooled !== undefined && paths.length === 1 ? 'stdin' : undefined);
  try {
    const warnings = await mappingWarnings(checked, { ...o, ...(sourceName ? { sourceName } : {}) });
    if (warnings.length > 0) {
      for (const w of warnings)
        stderrLine('error', 'mapping.warning', maskCardNumbers(`svc-ingest: warning: ${w}`));
      stderrLine(
        'error',
        'send.check_first',
        `svc-ingest: send --check-first: the mapping warns (${warnings.length}); nothing was sent`,
        { warnings: warnings.length },
      );
      await cleanup();
      return { exit: EXIT.USAGE, cleanup: async () => {} };
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { ...(spooled !== undefined ? { stdin: createReadStream(spooled.file) } : {}), cleanup };
}
