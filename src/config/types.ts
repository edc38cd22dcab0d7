// The one typed configuration of svc-ingest (defaults < SVC_CONFIG / --config file < env SVC_* < flags).

/**
 * The validated configuration every command runs with.
 * @example const cfg = loadConfig({ flags: { 'send.concurrency': { value: '8', flag: '--concurrency' } } }); cfg.send.concurrency === 8
 */
export interface Config {
  /** env SVC_BASE_URL */
  baseUrl: string;
  /** A non-loopback base URL must be https unless this is true (env SVC_ALLOW_INSECURE_HTTP). */
  allowInsecureHttp: boolean;
  /** Per request (SVC_TIMEOUT_MS), default 30000. */
  timeoutMs: number;
  userAgent: string;
  /** Sent as X-SVC-Institution-Id (SVC_INSTITUTION_ID). */
  institutionId?: string;
  /** header 'Authorization', scheme 'Bearer' ('' = raw token); token from env var `tokenEnv` or file `tokenFile`; none = no auth header. */
  auth: { header: string; scheme: string; tokenEnv?: string; tokenFile?: string };
  /** Mutual TLS (SVC_TLS_CERT_FILE, SVC_TLS_KEY_FILE, SVC_TLS_CA_FILE, SVC_TLS_PASSPHRASE_ENV). */
  tls: { certFile?: string; keyFile?: string; caFile?: string; passphraseEnv?: string };
  session: {
    provider: 'startSession' | 'static' | 'command';
    tokenEnv?: string;
    command?: string;
    /** Env variables passed to `command` besides PATH, HOME and SVC_CUSTOMER_ID (SVC_SESSION_COMMAND_ENV). */
    commandEnv: string[];
    organizationId: string;
    scopes: string[];
    refreshBeforeMs: number;
  };
  send: {
    concurrency: number;
    batchSize: number;
    maxRetries: number;
    retryBaseMs: number;
    retryMaxMs: number;
    ledgerPath: string;
    rejectsPath: string;
    resume: boolean;
    /** Retries of each half when a failing batch is split (`--split-retries`). */
    splitRetries: number;
    /** How long the service may keep failing, from its first failure, before the run gives up (`--outage-max-ms`). */
    outageMaxMs: number;
    /** How long the check before reading retries an unavailable service (its flag: the settings table). */
    healthCheckWindowMs: number;
    /** A progress log line this often when stderr is not a TTY (0 = never); `--progress-interval` in seconds. */
    progressIntervalMs: number;
    /** Most reject lines one run appends (0 = no limit); past it the run stops (INPUT_TOO_MANY_REJECTS). */
    maxRejects: number;
    /** Most bytes one run appends to the rejects file (0 = no limit). */
    maxRejectBytes: number;
    /** Stop when at least this percent of the first `rejectSample` records are rejected (0 = off). */
    maxRejectPercent: number;
    rejectSample: number;
  };
  /** Prometheus metrics of a send run: a textfile-collector file and/or a /metrics port on 127.0.0.1. */
  metrics: { file?: string; port?: number; labels?: string[] };
  /**
   * `tickets listen`: the signing secret (env variable named by secretEnv, or a file), the header / request
   * timeout and the connection cap.
   */
  webhook: { secretEnv?: string; secretFile?: string; timeoutMs: number; maxConnections: number };
  /**
   * The shared PostgreSQL ledger: `url` postgres://USER@HOST[:PORT]/DB (SVC_LEDGER_URL), the password from a file
   * (SVC_LEDGER_PASSWORD_FILE; else the URL, PGPASSWORD or ~/.pgpass), claims' lease (SVC_LEDGER_LEASE_MS), how long
   * a lost database is waited for mid-run (SVC_LEDGER_WAIT_MS), and whether a server off loopback may be reached
   * without TLS (SVC_LEDGER_ALLOW_PLAINTEXT; refused otherwise).
   */
  ledger: {
    url?: string;
    passwordFile?: string;
    leaseMs: number;
    waitMs: number;
    /** Connections one process opens to the database at most (SVC_LEDGER_POOL_MAX; default 4). */
    poolMax: number;
    allowPlaintext: boolean;
    /** The feed's ledger name in a shared PostgreSQL database (its schema; SVC_LEDGER_NAME); the URL's ?schema= wins. */
    name?: string;
  };
  /**
   * The prepare stage's worker pool: `workers` auto (files of 8 MB or more, in a dry run or when sending at
   * concurrency 16 or more), on or off (SVC_PREPARE_WORKER); worker threads (SVC_PREPARE_THREADS; default one
   * per core up to 4 in a dry run, else 1); bytes a chunk of input holds before it ends at the next record
   * (SVC_PREPARE_CHUNK_BYTES; default 512 KiB).
   */
  prepare: { workers: 'auto' | 'on' | 'off'; threads?: number; chunkBytes?: number };
  /** SVC_LOG_LEVEL */
  log: { level: string };
}

/**
 * A value given on the command line, keyed by dotted config path, with the flag's name for messages.
 * @example { 'send.concurrency': { value: '8', flag: '--concurrency' } }
 */
export type ConfigFlags = Record<string, { value: unknown; flag: string }>;
