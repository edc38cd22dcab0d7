// Compressed input: told by its first bytes (any input, a stream included), decompressed where Node can (gzip;
// zstd when the running Node's zlib has it), named with the command to use where it cannot (xz, bzip2, zstd on an
// older Node). A decompression error names the input and how far it got, and is a broken input (read/broken.ts).
import { pipeline, Readable, type Transform } from 'node:stream';
import { SvcIngestError } from '../errors.ts';
import { brokenInput } from './broken.ts';

export type Compression = 'gzip' | 'zstd' | 'xz' | 'bzip2';

/** The tool that decompresses each kind, for the message when Node cannot. */
const TOOL: Record<Compression, string> = {
  gzip: 'gzip -dc',
  zstd: 'zstd -dc',
  xz: 'xz -dc',
  bzip2: 'bzip2 -dc',
};

/**
 * The compression an input's first bytes announce (its magic number), or undefined for plain bytes.
 * bzip2's `BZh` is text too: it counts only with a block size digit and the block magic after it.
 * @example compressionOf(Buffer.from([0x1f, 0x8b, 8])) // 'gzip'
 */
export function compressionOf(head: Buffer): Compression | undefined {
  if (head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (head.length >= 4 && head.readUInt32LE(0) === 0xfd2fb528) return 'zstd';
  if (head.length >= 6 && head.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])))
    return 'xz';
  if (
    head.length >= 10 &&
    head.toString('latin1', 0, 3) === 'BZh' &&
    head[3]! >= 0x31 &&
    head[3]! <= 0x39 &&
    head.subarray(4, 10).equals(Buffer.from([0x31, 0x41, 0x59, 0x26, 0x53, 0x59]))
  )
    return 'bzip2';
  return undefined;
}

/** Node's decompressor for a kind, or undefined when the running Node has none (zstd before 22.15, xz, bzip2). */
async function decompressor(kind: Compression): Promise<Transform | undefined> {
  // zlib is loaded for a compressed input only.
  const zlib = await import('node:zlib');
  if (kind === 'gzip') return zlib.createGunzip();
  const zstd = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;
  if (kind === 'zstd' && typeof zstd === 'function') return zstd();
  return undefined;
}

/**
 * The decompressed bytes of `raw`, whose first bytes announced `kind`. A kind Node cannot read is refused naming the
 * tool (INPUT_FORMAT_UNKNOWN); cut or corrupt data is a broken input (INPUT_PARSE) naming the input and the
 * compressed and decompressed bytes read before it broke.
 * @example for await (const b of decompressed(raw, 'gzip', 'stdin')) …
 */
export async function* decompressed(
  raw: AsyncIterable<Buffer | string>,
  kind: Compression,
  source: string,
): AsyncGenerator<Buffer> {
  const inflate = await decompressor(kind);
  if (inflate === undefined)
    throw new SvcIngestError(
      'INPUT_FORMAT_UNKNOWN',
      `${source}: ${kind}-compressed, which this Node cannot decompress: decompress with \`${TOOL[kind]}\` ` +
        `(e.g. \`${TOOL[kind]} FILE | svc-ingest send -\` under \`set -o pipefail\`)`,
      { source },
    );
  let compressedBytes = 0;
  let bytesOut = 0;
  const counting = (async function* () {
    for await (const chunk of raw) {
      compressedBytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      yield chunk;
    }
  })();
  // pipeline forwards a source error into the decompressor and closes the source when reading stops early.
  pipeline(Readable.from(counting), inflate, () => {});
  try {
    for await (const chunk of inflate) {
      bytesOut += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
  } catch (err) {
    if (err instanceof SvcIngestError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (!code.startsWith('Z_') && !code.startsWith('ERR_ZSTD') && !code.startsWith('ZSTD_')) throw err;
    const what = (err as Error).message === 'unexpected end of file' ? 'cut short' : 'corrupt';
    throw brokenInput(
      'INPUT_PARSE',
      `${source}: not valid ${kind} data: ${what} (${(err as Error).message}) after ${compressedBytes} ` +
        `compressed bytes (${bytesOut} bytes of data)`,
      { source, byte: compressedBytes, brief: `${source}: ${kind} data ${what} at byte ${compressedBytes}` },
      err,
    );
  }
}
