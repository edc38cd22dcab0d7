// Rejects file: one NDJSON line per rejected record (source, line, every error, the masked record).

import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SvcIngestError } from '../errors.ts';
import { maskDeep } from '../mask.ts';

/**
 * One reject line (CONTRACT.md). Nothing in it holds a full card number: the writer masks every string,
 * key and number of the line (src/mask.ts) on its way to the file.
 * @example {"source":"a.csv","line":17,"errors":[{"field":"postedAmount","message":"…"}],"record":{…}}
 */
export interface RejectLine {
  source: string;
  line: number;
  errors: Array<{ field: string; message: string }>;
  record?: unknown;
  runId?: string;
}

export interface RejectsWriter {
  write(line: RejectLine): void;
  close(): Promise<void>;
}

/** Open the rejects file for appending (mode 0600). Writes are buffered; close() flushes. */
export async function openRejectsWriter(path: string): Promise<RejectsWriter> {
  let stream: WriteStream;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
    await once(stream, 'open');
  } catch (err) {
    throw new SvcIngestError('LEDGER_WRITE', `cannot open rejects file ${path}: ${(err as Error).message}`, {
      source: path,
    });
  }
  let error: Error | null = null;
  stream.on('error', (err) => {
    error = err;
  });
  return {
    write(line) {
      if (error)
        throw new SvcIngestError('LEDGER_WRITE', `cannot write rejects file ${path}: ${error.message}`);
      // The last pass before the disk: every value, key and message of the line, whoever built it.
      stream.write(`${JSON.stringify(maskDeep(line))}\n`);
    },
    async close() {
      await new Promise<void>((resolve) => stream.end(resolve));
      if (error)
        throw new SvcIngestError(
          'LEDGER_WRITE',
          `cannot write rejects file ${path}: ${(error as Error).message}`,
        );
    },
  };
}

/** A rejects sink that discards (dry run without an explicit --rejects). */
export function nullRejectsWriter(): RejectsWriter {
  return { write() {}, async close() {} };
}
