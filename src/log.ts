// Creates the pino logger: NDJSON (or pretty on a TTY) to stderr, synchronous, with secrets and card numbers redacted.
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

/**
 * A pino logger writing to stderr (fd 2) synchronously, so nothing is lost when the process exits.
 * `pretty` defaults to whether stderr is a TTY; pino-pretty runs in-process as a stream (no worker).
 */
export function createLogger(opts: { level?: string; pretty?: boolean } = {}): Logger {
  const usePretty = opts.pretty ?? Boolean(process.stderr.isTTY);
  const destination = usePretty
    ? pretty({
        destination: 2,
        sync: true,
        colorize: Boolean(process.stderr.isTTY),
        translateTime: 'SYS:HH:MM:ss.l',
      })
    : pino.destination({ dest: 2, sync: true });
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
