// The chain's input: every input of a run prepared in turn (read → map → validate, inline or on the pool), as one
// stream of chunks, with the bytes consumed counted for progress and the inputs that held no record named.
import { fstatSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Logger } from '../log.ts';
import { firstWarnings } from '../map/first-warnings.ts';
import { createSilentErrors, type SilentErrors } from '../map/silent-errors.ts';
import type { CompiledProfile } from '../map/types.ts';
import { type InputSpec, readOnce, sourceName } from '../read/open.ts';
import { type PoolChoice, type PreparedChunks, prepareChunks } from './choose.ts';
import type { CheckedInputs } from './inputs.ts';

/** How much of the input has been consumed, for the progress line and its ETA. */
export interface InputBytes {
  read: number;
  /** Size of all inputs together, or null when one has no known size (a pipe). */
  total: number | null;
}

export interface SourceOptions {
  /** Profile name or path as given (the pool's workers load it themselves); undefined = canonical. */
  mapping?: string;
  pool: PoolChoice;
  stdin?: NodeJS.ReadableStream;
  logger: Logger;
  /** An input without records is logged at info instead of warn (`--allow-empty`). */
  allowEmpty?: boolean;
  /** Each input's reader hook (control totals: send/control-totals.ts). */
  tap?: (spec: InputSpec) => NonNullable<import('../read/open.ts').ReadOptions['tap']>;
}

/** A run's prepared input: the chunks, the bytes consumed, and the inputs found to hold no record. */
export interface PreparedSource {
  chunks: PreparedChunks;
  /** What the records showed of a probably wrong profile (silent-errors.ts): warned of at the end of the run. */
  silent: SilentErrors;
  bytes: InputBytes;
  emptyInputs: string[];
}

/** Size of each input in bytes where it is known: a file, or standard input redirected from a file. */
async function inputSizes(specs: InputSpec[]): Promise<Map<InputSpec, number | null>> {
  const sizes = new Map<InputSpec, number | null>();
  for (const spec of specs) {
    try {
      const st = spec.path === '-' ? fstatSync(0) : await stat(spec.path);
      sizes.set(spec, st.isFile() ? st.size : null);
    } catch {
      sizes.set(spec, null); // the reader reports an unreadable input
    }
  }
  return sizes;
}

/**
 * Prepare the inputs one after the other. An input without records is its own outcome (exit 4 when every input
 * is so), never a header error: a 0-byte file is "empty file", standard input "empty input", a CSV with only
 * its header "only a header, no records".
 * @example const src = await prepareSource(inputs, profile, o); for await (const items of src.chunks) …
 */
export async function prepareSource(
  inputs: CheckedInputs,
  profile: CompiledProfile,
  o: SourceOptions,
): Promise<PreparedSource> {
  const sizes = await inputSizes(inputs.specs);
  const known = [...sizes.values()];
  const bytes: InputBytes = {
    read: 0,
    total: known.every((n) => n !== null) ? known.reduce<number>((a, n) => a + (n ?? 0), 0) : null,
  };
  const emptyInputs: string[] = [];
  const silent = createSilentErrors(profile);
  // Each kind of warning logged at its first record, as the run meets it (the end of the run counts them all).
  const announce = firstWarnings(o.logger);
  const noRecords = (spec: InputSpec, why: string) => {
    const source = sourceName(spec);
    emptyInputs.push(source);
    o.logger[o.allowEmpty ? 'info' : 'warn']({ event: 'input.empty', source }, `${source}: ${why}`);
  };
  async function* chunks(): PreparedChunks {
    for (const spec of inputs.specs) {
      if (sizes.get(spec) === 0) {
        noRecords(spec, readOnce(spec) ? 'empty input' : 'empty file');
        continue;
      }
      const bytesBefore = bytes.read;
      let records = 0;
      for await (const chunk of prepareChunks(
        spec,
        profile,
        {
          mapping: o.mapping,
          delimiter: inputs.delimiter,
          stdin: o.stdin,
          onHeader: readOnce(spec) ? inputs.onHeader : undefined,
          columns: inputs.headers.get(spec),
          pool: o.pool,
          tap: o.tap?.(spec),
          onBytes: (n) => {
            bytes.read += n;
          },
        },
        silent,
      )) {
        records += chunk.length;
        announce(silent.state);
        yield chunk;
      }
      // The pool merges a chunk's counts once the chunk is done: its last chunk's are said here.
      announce(silent.state);
      if (records > 0) continue;
      noRecords(
        spec,
        bytes.read === bytesBefore
          ? readOnce(spec)
            ? 'empty input'
            : 'empty file'
          : inputs.headerSeen.has(sourceName(spec))
            ? 'only a header, no records'
            : 'no records (blank lines only)',
      );
    }
  }
  return { chunks: chunks(), silent, bytes, emptyInputs };
}
