// The Config type and the flags' type, derived from the settings table (src/config/schema.ts): each key's type from
// its kind (and choices), optional where the table says so, the dotted paths as nested groups.
import type { SettingPath, SettingsTable } from './schema.ts';
import type { LOG_LEVELS, SESSION_PROVIDERS } from './setting-spec.ts';

type Decl = SettingsTable[number];
type ValueOf<D> = D extends { kind: 'int' }
  ? number
  : D extends { kind: 'bool' }
    ? boolean
    : D extends { kind: 'list' }
      ? string[]
      : D extends { kind: 'level' }
        ? (typeof LOG_LEVELS)[number]
        : D extends { kind: 'provider' }
          ? (typeof SESSION_PROVIDERS)[number]
          : D extends { kind: 'choice'; choices: readonly (infer C)[] }
            ? C
            : string;
type Leaf<P> = P extends `${string}.${infer L}` ? L : P;
type Shown<T> = { [K in keyof T]: T[K] };
type Fields<D extends Decl> = Shown<
  { [K in D as K extends { optional: true } ? never : Leaf<K['path']>]: ValueOf<K> } & {
    [K in D as K extends { optional: true } ? Leaf<K['path']> : never]?: ValueOf<K>;
  }
>;
type GroupName = Decl['path'] extends infer P ? (P extends `${infer G}.${string}` ? G : never) : never;

/**
 * The validated configuration every command runs with (defaults < SVC_CONFIG / --config file < env SVC_* < flags),
 * as the table declares it: `cfg.send.concurrency: number`, `cfg.metrics.port?: number`, `cfg.prepare.workers:
 * 'auto' | 'on' | 'off'`.
 */
export type Config = Shown<
  Fields<Exclude<Decl, { path: `${string}.${string}` }>> & {
    [G in GroupName]: Fields<Extract<Decl, { path: `${G}.${string}` }>>;
  }
>;

/**
 * Values given on the command line, keyed by the table's dotted paths (a misspelt key does not compile), with the
 * flag's name for messages.
 * @example { 'send.concurrency': { value: '8', flag: '--concurrency' } }
 */
export type ConfigFlags = { [P in SettingPath]?: { value: unknown; flag: string } };
