// What a row of the settings table (src/config/schema.ts) can say: a key's kind, its flag and the option groups
// that name the commands taking it, and the rule of env names.

/** How a key's value is parsed from a string (env, flag) and checked. */
export type KeyKind = 'string' | 'url' | 'int' | 'bool' | 'list' | 'level' | 'provider' | 'choice';

/**
 * The option groups of flags that are settings, and the commands that take each (src/cli/settings.ts).
 * connection: the service's address and the request deadline; logging: the log level; dispatch: how batches are
 * sent; backoff: the waits between retries (a batch's, a ticket's resubmissions); rejectCaps: when rejects stop a run; progress: progress lines and metrics; rejectsFile: where rejects go;
 * resume: `--no-resume`; ledgerUrl: a PostgreSQL ledger named apart from `--ledger`.
 */
const TICKETS = ['tickets create', 'tickets get', 'tickets listen', 'tickets status'] as const;
/** The commands that call the service. */
const CALLERS = ['send', 'backfill work', 'redemptions', 'stores', ...TICKETS, 'reconcile', 'trace'] as const;
/** The commands that work on a ledger alone, calling nothing. */
const LEDGER_ONLY = [
  'ledger status',
  'ledger failed',
  'ledger find',
  'ledger prune',
  'ledger migrate',
  'ledger grant',
  'backfill plan',
  'backfill status',
] as const;
const DELIVERY = ['send', 'backfill work'] as const;

export const SETTING_GROUPS = {
  connection: CALLERS,
  logging: [...CALLERS, ...LEDGER_ONLY],
  dispatch: DELIVERY,
  backoff: [...DELIVERY, 'tickets create'],
  rejectCaps: DELIVERY,
  progress: DELIVERY,
  rejectsFile: DELIVERY,
  resume: ['send'],
  ledgerUrl: [...TICKETS, 'trace'],
} as const;
export type SettingGroup = keyof typeof SETTING_GROUPS;

/**
 * A setting's flag: `--name <arg>` (the name is the key's last part in kebab case unless `name` says otherwise),
 * its help (the default from the table appended, or with `show: 'env'` the env variable), its group, and
 * `scale` when the flag's unit is not the key's (seconds for milliseconds: 1000). Without `arg` it is a switch: it
 * sets a bool key to true (`--insecure-http`), or to false when its name starts with `no-` (`--no-resume`).
 * @example { arg: '<n>', help: 'retries of one batch before it is marked failed', group: 'dispatch' }
 */
export interface FlagSpec {
  arg?: string;
  help: string;
  group: SettingGroup;
  name?: string;
  scale?: number;
  /** Repeatable (a list key): each use adds one item. */
  repeat?: boolean;
  /** No default is shown (an optional key). */
  noDefault?: boolean;
  /** What the help appends: the default (when there is one; the rule) or the env variable that sets the key. */
  show?: 'default' | 'env';
}

/**
 * One setting as the table declares it (the env name only where it is not the rule's).
 * @example { path: 'send.concurrency', kind: 'int', min: 1, max: 256 }
 */
export interface SettingDecl {
  path: string;
  kind: KeyKind;
  /**
   * The key's default: the one place it is declared (config/default.json is checked equal to these by
   * test/config/settings.test.ts). Every key has one unless it is `optional`.
   */
  default?: string | number | boolean | readonly string[];
  /** SVC_ and the path in upper snake case (send.batchSize: SVC_SEND_BATCH_SIZE) unless declared otherwise. */
  env?: string;
  flag?: FlagSpec;
  min?: number;
  max?: number;
  /** Absent is allowed (no default). */
  optional?: boolean;
  /** Non-empty string required. */
  nonEmpty?: boolean;
  /** Names a file that must be readable (shown in messages only when it looks like a path: config/secret.ts). */
  file?: boolean;
  /** Names env variables (each list item too): checked against the env-name rule, never echoed otherwise. */
  envName?: boolean;
  /** Goes into an HTTP header as its name (a token) or its value (printable ASCII); never echoed when refused. */
  header?: 'name' | 'value';
  /** kind 'choice': the values allowed. */
  choices?: readonly string[];
  /** May hold a password (a postgres:// URL): a refused value is never echoed. */
  noEcho?: boolean;
}

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export const SESSION_PROVIDERS = ['startSession', 'static', 'command'] as const;

/** The env variable of a key path by the rule: SVC_ and the path in upper snake case. */
export function envNameOf(path: string): string {
  return `SVC_${path
    .replace(/([A-Z])/g, '_$1')
    .replace(/\./g, '_')
    .toUpperCase()}`;
}
