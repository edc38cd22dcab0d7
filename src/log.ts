// Creates the pino logger: NDJSON (or pretty on a TTY) to stderr, synchronous, with secrets and card numbers redacted.
// Owns stderr's live line (the progress line on a TTY): a log line clears it first and redraws it after.
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import type { pino as Pino, Logger as PinoLogger } from 'pino';
import { type CliIo, cliIo, isProcessIo } from './io.ts';
import { maskCardNumbers, maskDeep } from './mask/index.ts';

/**
 * pino (and what it loads: its transports' worker machinery, SonicBoom, the serialisers; ~29 modules), loaded on the
 * first logger or stderr line: a command that writes nothing on stderr (`--version`, `--help`) never loads it.
 */
let pinoModule: typeof Pino | undefined;
const loadPino = (): typeof Pino => {
  pinoModule ??= (createRequire(import.meta.url)('pino') as { pino: typeof Pino }).pino;
  return pinoModule;
};

/**
 * The logger every module takes.
 * @example const log = createLogger({ level: 'debug' }); log.info({ batchId }, 'batch.acked');
 */
export type Logger = PinoLogger;

const CENSOR = '[redacted]';
/** Key names whose values are secrets or card numbers, at any depth. */
const SENSITIVE_KEY =
  /token|secret|passphrase|password|^(card)?pan$|primaryaccountnumber|card_?num(ber)?|^card_?no$/i;
/**
 * HTTP header names that carry credentials: censored in a headers object (a key named `headers`) and as a log
 * line's own field, not deeper elsewhere, where such a word is data (a count keyed by the code AUTHORIZATION).
 */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|x-svc-session-token|cookie|set-cookie)$/i;
const HEADERS_KEY = /headers$/i;

/**
 * A log object with secrets censored by key and every card number masked (src/mask/index.ts: values, keys,
 * messages; an Error becomes its masked name, message and stack, as pino would have printed it).
 */
function scrub(value: unknown, depth: number, inHeaders = false): unknown {
  if (typeof value === 'string') return maskCardNumbers(value);
  if (typeof value !== 'object' || value === null) return maskDeep(value);
  if (depth > 6) {
    try {
      return maskDeep(value);
    } catch {
      return '[too deep]';
    }
  }
  if (value instanceof Error) {
    // A copy of the same class (pino's serializer prints its name), its message, stack and own members masked.
    const copy = Object.create(Object.getPrototypeOf(value) as object) as Error;
    for (const [k, v] of Object.entries(value))
      (copy as unknown as Record<string, unknown>)[k] = scrub(v, depth + 1, HEADERS_KEY.test(k));
    Object.defineProperty(copy, 'message', { value: maskCardNumbers(value.message), enumerable: false });
    if (value.stack !== undefined)
      Object.defineProperty(copy, 'stack', { value: maskCardNumbers(value.stack), enumerable: false });
    if (value.cause !== undefined)
      Object.defineProperty(copy, 'cause', { value: scrub(value.cause, depth + 1), enumerable: false });
    return copy;
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const secret = SENSITIVE_KEY.test(k) || ((depth === 0 || inHeaders) && CREDENTIAL_HEADER.test(k));
    out[maskCardNumbers(k)] =
      secret && v !== undefined && v !== null ? CENSOR : scrub(v, depth + 1, HEADERS_KEY.test(k));
  }
  return out;
}

/** fd 2, written synchronously (SonicBoom retries EAGAIN on a non-blocking pipe); one for the process. */
let stderrSink: ReturnType<typeof Pino.destination> | undefined;
const CLEAR_LINE = '\r\x1b[K';

/** The run's stderr: the process's is fd 2 written synchronously, a test run's is its own stream. */
function rawStderr(io: CliIo): { write(text: string): unknown } {
  if (!isProcessIo(io)) return io.stderr;
  stderrSink ??= loadPino().destination({ dest: 2, sync: true });
  return stderrSink;
}

/** Writes a piece of stderr output (a log line, a summary) so that it never lands on the live line. */
export function writeStderr(text: string, io: CliIo = cliIo()): void {
  const out = rawStderr(io);
  const liveText = io.liveText ?? '';
  if (liveText === '') {
    out.write(text);
    return;
  }
  out.write(CLEAR_LINE);
  out.write(text);
  out.write(liveText);
}

/**
 * The one live line on stderr (a TTY's progress line): `show` draws or redraws it in place, `clear` erases it.
 * Log lines written meanwhile go above it (writeStderr), never glued onto it.
 * @example liveLine.show('read 1200  sent 1150'); …; liveLine.clear()
 */
export const liveLine = {
  show(text: string): void {
    const io = cliIo();
    io.liveText = text;
    rawStderr(io).write(`${CLEAR_LINE}${text}`);
  },
  clear(): void {
    const io = cliIo();
    if ((io.liveText ?? '') === '') return;
    io.liveText = '';
    rawStderr(io).write(CLEAR_LINE);
  },
};

/** How stderr reads: `text` for a person (a terminal), `json` for a log collector (one JSON object a line). */
export type LogFormat = 'text' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

/** Sets the format for the run (`--log-format`); undefined goes back to env SVC_LOG_FORMAT, else the TTY rule. */
export function setLogFormat(format: LogFormat | undefined): void {
  cliIo().logFormat = format;
}

/** The format in force: `--log-format`, else env SVC_LOG_FORMAT, else text on a TTY and json elsewhere. */
export function logFormat(io: CliIo = cliIo()): LogFormat {
  if (io.logFormat) return io.logFormat;
  const env = io.env.SVC_LOG_FORMAT;
  if (env === 'text' || env === 'json') return env;
  return io.stderr.isTTY ? 'text' : 'json';
}

const LEVEL_NUMBER = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/**
 * A line a person reads whatever the log level — a run's summary, the one error line of a command that could not
 * run, a warning about its input. As text it is written as given; as JSON each line of `text` is one object
 * shaped as the logger's (`level`, `time`, `pid`, `event`, `fields`, and `msg` the same text). Card numbers masked.
 * @example stderrLine('error', 'cli.error', 'svc-ingest: INPUT_UNREADABLE: cannot read x.csv', { code: 'INPUT_UNREADABLE', exitStatus: 1 })
 */
export function stderrLine(
  level: keyof typeof LEVEL_NUMBER,
  event: string,
  text: string,
  fields: Record<string, unknown> = {},
): void {
  writeStderr(formatStderrLine(level, event, text, fields));
}

/** What stderrLine writes, for a caller that writes it itself (with back-pressure); ends with a line break. */
export function formatStderrLine(
  level: keyof typeof LEVEL_NUMBER,
  event: string,
  text: string,
  fields: Record<string, unknown> = {},
): string {
  const safe = maskCardNumbers(text.replace(/\n+$/, ''));
  if (logFormat() === 'text') return `${safe}\n`;
  const extra = scrub(fields, 0) as Record<string, unknown>;
  const time = new Date().toISOString();
  return safe
    .split('\n')
    .map(
      (msg) =>
        `${JSON.stringify({ level: LEVEL_NUMBER[level], time, pid: process.pid, event, ...extra, msg })}\n`,
    )
    .join('');
}

/**
 * A pino logger writing to stderr (fd 2) synchronously, so nothing is lost when the process exits; `level` is the
 * configuration's log.level (a command passes its `config.log`).
 * `pretty` defaults to the log format (logFormat(): text on a TTY); pino-pretty runs in-process as a stream (no worker),
 * loaded only then (a JSON run, and a command that logs nothing, never load it).
 */
export function createLogger(opts: { readonly level: string; pretty?: boolean }): Logger {
  const pino = loadPino();
  // The run's io, taken now: pino-pretty writes later, from its own stream.
  const io = cliIo();
  const usePretty = opts.pretty ?? logFormat(io) === 'text';
  const destination = usePretty
    ? (createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty'))({
        destination: new Writable({
          write(chunk: Buffer | string, _enc, cb) {
            writeStderr(typeof chunk === 'string' ? chunk : chunk.toString('utf8'), io);
            cb();
          },
        }),
        colorize: Boolean(io.stderr.isTTY),
        translateTime: 'SYS:HH:MM:ss.l',
      })
    : { write: (text: string) => writeStderr(text, io) };
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      // ISO time, not epoch milliseconds: 13 digits on every line would pass for a card number 1 time in 10
      // with whoever scans the logs for them (and people read this one).
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'headers.authorization',
          'headers["x-svc-session-token"]',
          '*.headers.authorization',
          '*.headers["x-svc-session-token"]',
          'sessionToken',
          '*.sessionToken',
          'token',
          '*.token',
          'passphrase',
          '*.passphrase',
        ],
        censor: CENSOR,
      },
      formatters: { log: (obj) => scrub(obj, 0) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          // pino takes a leading Error's message as the line's msg: give it the masked copy instead.
          const [first, ...rest] = args as unknown[];
          const head =
            first instanceof Error
              ? [
                  { err: scrub(first, 0) },
                  ...(typeof rest[0] === 'string' ? [] : [maskCardNumbers(first.message)]),
                ]
              : [first];
          method.apply(
            this,
            [...head, ...rest].map((a) => (typeof a === 'string' ? maskCardNumbers(a) : a)) as Parameters<
              typeof method
            >,
          );
        },
      },
    },
    destination,
  );
}
