// The flags that are settings, from the one table (src/config/schema.ts): declared on a command by their group, with
// the help text and the default the table gives; and what commander parsed turned into configuration
// flags (key, value, flag) for loadConfig. A new setting with a flag touches the table and the code that uses it.
import { type Command, Option } from 'commander';
import {
  CONFIG_KEYS,
  type ConfigFlags,
  defaultValue,
  type KeySpec,
  type SettingGroup,
} from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';

type FlagKey = KeySpec & { flag: NonNullable<KeySpec['flag']> };

/** The settings of the groups, in the table's order. */
function settingsOf(groups: readonly SettingGroup[]): FlagKey[] {
  return CONFIG_KEYS.filter((k): k is FlagKey => k.flag !== undefined && groups.includes(k.flag.group));
}

/** `--batch-size` of send.batchSize: the flag's own name, else the key's last part in kebab case. */
export function flagNameOf(k: FlagKey): string {
  const last = k.path.split('.').pop() as string;
  return `--${k.flag.name ?? last.replace(/([A-Z])/g, '-$1').toLowerCase()}`;
}

/** The default as the help shows it, in the flag's unit (64 MiB and more also in MiB). */
export function shownDefault(k: FlagKey): string | undefined {
  const v = defaultValue(k.path);
  if (k.flag.noDefault || v === undefined) return undefined;
  if (typeof v !== 'number') return String(v);
  const n = v / (k.flag.scale ?? 1);
  return n >= 1 << 26 && n % (1 << 20) === 0 ? `${n} = ${n / (1 << 20)} MiB` : String(n);
}

/** The help line of a setting's flag: its text, then its default or the env variable that sets it. */
function helpOf(k: FlagKey): string {
  if (k.flag.show === 'env') return `${k.flag.help} (env ${k.env})`;
  const shown = shownDefault(k);
  return shown === undefined ? k.flag.help : `${k.flag.help} (default ${shown})`;
}

/** Declares the flags of `groups` on `cmd`, in the table's order. */
export function addSettingOptions(cmd: Command, ...groups: SettingGroup[]): Command {
  for (const k of settingsOf(groups)) {
    const option = new Option(`${flagNameOf(k)}${k.flag.arg ? ` ${k.flag.arg}` : ''}`, helpOf(k));
    if (k.flag.repeat) option.argParser((value: string, previous: string[] = []) => [...previous, value]);
    cmd.addOption(option);
  }
  return cmd;
}

/** A flag in its unit (seconds, decimals allowed) as the key's (whole milliseconds). */
function scaled(value: string, k: FlagKey, flag: string): string {
  const n = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n))
    throw new SvcIngestError('USAGE_INVALID', `${flag}: expected a number of seconds, got "${value}"`, {
      field: flag,
    });
  return String(Math.round(n * (k.flag.scale as number)));
}

/**
 * The flags of `groups` that commander parsed into `opts`, as configuration flags (key → value, flag). A switch
 * counts only when given (commander gives `--no-resume`'s key true when it is not).
 */
export function settingFlags(opts: object, ...groups: SettingGroup[]): ConfigFlags {
  const parsed = opts as Record<string, unknown>;
  const out: ConfigFlags = {};
  for (const k of settingsOf(groups)) {
    const flag = flagNameOf(k);
    const value = parsed[new Option(flag).attributeName()];
    if (value === undefined || (!k.flag.arg && value !== !flag.startsWith('--no-'))) continue;
    out[k.path] = {
      value: k.flag.scale && typeof value === 'string' ? scaled(value, k, flag) : value,
      flag,
    };
  }
  return out;
}
