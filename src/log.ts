// Creates the pino logger: NDJSON (or pretty on a TTY) to stderr, synchronous, with secrets and card numbers redacted.
// Owns stderr's live line (the progress line on a TTY): a log line clears it first and redraws it after.
import { Writable } from 'node:stream';
import { type Logger as PinoLogger, pino } from 'pino';
import pretty from 'pino-pretty';

/**
 * The logger every module takes.
 * @example const log = createLogger({ level: 'debug' }); log.info({ batchId }, 'batch.acked');
 */
export type Logger = PinoLogger;

const CENSOR = '[redacted]';
/** Key names whose values are secrets or card numbers, at any depth. */
const SENSITIVE_KEY =
  /^(authorization|proxy-authorization|x-svc-session-token|cookie|set-cookie)$|token|secret|passphrase|password|^(card)?pan$|primaryaccountnumber|card_?num(ber)?|^card_?no$/i;
/** 15-19 digit runs (a card number's length) in free text. */
const PAN_LIKE = /\b\d{15,19}\b/g;

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string')
    return value.replace(PAN_LIKE, (m) => `${'*'.repeat(m.length - 4)}${m.slice(-4)}`);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SENSITIVE_KEY.test(k) && v !== undefined && v !== null ? CENSOR : scrub(v, depth + 1);
  }
  return out;
}

/** fd 2, written synchronously (SonicBoom retries EAGAIN on a non-blocking pipe); one for the process. */
let stderrSink: ReturnType<typeof pino.destination> | undefined;
/** The live line's text, '' when none is shown. */
let liveText = '';
const CLEAR_LINE = '\r\x1b[K';

function rawStderr(): ReturnType<typeof pino.destination> {
  stderrSink ??= pino.destination({ dest: 2, sync: true });
  return stderrSink;
}

/** Writes a piece of stderr output (a log line, a summary) so that it never lands on the live line. */
export function writeStderr(text: string): void {
  const out = rawStderr();
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
    liveText = text;
    rawStderr().write(`${CLEAR_LINE}${text}`);
  },
  clear(): void {
    if (liveText === '') return;
    liveText = '';
    rawStderr().write(CLEAR_LINE);
  },
};

/**
 * A pino logger writing to stderr (fd 2) synchronously, so nothing is lost when the process exits.
 * `pretty` defaults to whether stderr is a TTY; pino-pretty runs in-process as a stream (no worker).
 */
export function createLogger(opts: { level?: string; pretty?: boolean } = {}): Logger {
  const usePretty = opts.pretty ?? Boolean(process.stderr.isTTY);
  const destination = usePretty
    ? pretty({
        destination: new Writable({
          write(chunk: Buffer | string, _enc, cb) {
            writeStderr(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
            cb();
          },
        }),
        colorize: Boolean(process.stderr.isTTY),
        translateTime: 'SYS:HH:MM:ss.l',
      })
    : { write: writeStderr };
  return pino(
    {
      level: opts.level ?? 'info',
      base: { pid: process.pid },
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
          method.apply(
            this,
            args.map((a) => (typeof a === 'string' ? scrub(a, 0) : a)) as Parameters<typeof method>,
          );
        },
      },
    },
    destination,
  );
}
