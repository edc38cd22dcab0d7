// Shared by every command: the common connection flags, config loading from them, logger and client set-up.

import type { Command } from 'commander';
import type { SvcClient } from '../client/index.ts';
import {
  CONFIG_FILE_ENV,
  type Config,
  type ConfigFlags,
  isLoopbackHost,
  loadConfig,
} from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { createLogger, type Logger, stderrLine } from '../log.ts';
import { maskCardNumbers, maskDeep, maskOwnRecord } from '../mask/index.ts';
import { addSettingOptions, settingFlags } from './settings.ts';

/**
 * The rejects file of a command: its --rejects when given, else the table's send.rejectsPath (env SVC_REJECTS_PATH).
 * @example rejectsFileOf(config, opts.rejects) // 'ledger/rejects.ndjson'
 */
export function rejectsFileOf(config: Config, given?: string): string {
  return given ?? config.send.rejectsPath;
}

/**
 * Adds an "Examples:" block to a command's --help: each example a command line with a comment above it.
 * @example addExamples(cmd, [['svc-ingest stores --ad 100001 --postal-code 10001 --radius 5000', 'by postal code']])
 */
export function addExamples(cmd: Command, examples: Array<[command: string, what: string]>): Command {
  const lines = examples.map(([command, what]) => `  # ${what}\n  ${command}`);
  return cmd.addHelpText('after', `\nExamples:\n${lines.join('\n')}`);
}

/**
 * The common flags as commander parses them: `--config` here; the settings among them (`--base-url`, `--timeout`,
 * `--insecure-http`, `--log-level`: the table's connection and logging groups) are read by the table.
 * @example { config: 'prod.json', baseUrl: 'https://svc.example', logLevel: 'debug' }
 */
export interface CommonOptions {
  config?: string;
}

/** `--config <file>`: the one common flag that is not a setting. */
export function addConfigOption(cmd: Command): Command {
  return cmd.option('--config <file>', `JSON config file merged over the defaults (env ${CONFIG_FILE_ENV})`);
}

/** Adds the connection settings (--base-url, --insecure-http, --timeout), --config and --log-level to a command. */
export function addConnectionOptions(cmd: Command): Command {
  return addSettingOptions(addConfigOption(addSettingOptions(cmd, 'connection')), 'logging');
}

/** Adds --config and --log-level: the common flags of the commands that do not call the service. */
export function addConfigAndLogOptions(cmd: Command): Command {
  return addSettingOptions(addConfigOption(cmd), 'logging');
}

/** The config flags of the common options, keyed by dotted config path. */
export function commonFlags(opts: CommonOptions): ConfigFlags {
  return settingFlags(opts, 'connection', 'logging');
}

/** Loads the config for a command: defaults < files < env < the common flags < `extra` (command flags). */
export function loadCommandConfig(opts: CommonOptions, extra: ConfigFlags = {}, env = cliIo().env): Config {
  return loadConfig({
    ...(opts.config ? { file: opts.config } : {}),
    env,
    flags: { ...commonFlags(opts), ...extra },
  });
}

/**
 * What a command runs with.
 * @example const ctx = await setUp(opts); try { … ctx.client … } finally { await ctx.close() }
 */
export interface CommandContext {
  config: Config;
  logger: Logger;
  client: SvcClient;
  close(): Promise<void>;
}

/**
 * Loads config, creates the logger and the client; `close()` releases the client's sockets.
 * The client (ky, undici) is imported here, lazily, so commands that never call the service load none of it.
 */
export async function setUp(
  opts: CommonOptions,
  extra: ConfigFlags = {},
  clientOpts: { connections?: number } = {},
): Promise<CommandContext> {
  const config = loadCommandConfig(opts, extra);
  const logger = createLogger(config.log);
  const { createClient } = await import('../client/client.ts');
  const client = createClient(config, { logger, ...clientOpts });
  return { config, logger, client, close: () => client.close() };
}

/** Runs `fn` with a context and always closes it. */
export async function withContext<T>(
  opts: CommonOptions,
  fn: (ctx: CommandContext) => Promise<T>,
  extra: ConfigFlags = {},
): Promise<T> {
  const ctx = await setUp(opts, extra);
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

/** Writes one JSON document (one line) on stdout, every card number in it masked (values and keys). */
export function printJson(value: unknown): void {
  cliIo().stdout.write(`${JSON.stringify(maskDeep(value))}\n`);
}

/**
 * printJson of a record the tool itself wrote (a ledger line, a ledger query's answer): its own batch and request
 * ids at the top level are printed whole (src/mask/index.ts maskOwnRecord), everything else masked as by printJson.
 */
export function printOwnJson(value: unknown): void {
  cliIo().stdout.write(`${JSON.stringify(maskOwnRecord(value))}\n`);
}

/** One `svc-ingest: warning: …` line on stderr (the text commands: map, mapping check), card numbers masked. */
export function printWarning(message: string): void {
  // One JSON object off a terminal (a log collector reads stderr), the readable line on one; masked either way.
  stderrLine('warn', 'input.warning', `svc-ingest: warning: ${message}`);
}

/** Writes human-readable text on stdout, every card number in it masked. */
export function printText(lines: string[]): void {
  if (lines.length > 0) cliIo().stdout.write(`${maskCardNumbers(lines.join('\n'))}\n`);
}

/** Parses an integer option value; a usage error names the flag. */
export function parseIntOption(value: string, flag: string): number {
  if (!/^\s*-?\d+\s*$/.test(value)) {
    throw new SvcIngestError('USAGE_INVALID', `${flag}: expected an integer, got ${JSON.stringify(value)}`, {
      field: flag,
    });
  }
  return Number(value);
}

/** Parses a decimal option value; a usage error names the flag. */
export function parseNumberOption(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) {
    throw new SvcIngestError('USAGE_INVALID', `${flag}: expected a number, got ${JSON.stringify(value)}`, {
      field: flag,
    });
  }
  return n;
}

/** Commander argument parser of a repeatable option: every value, in order. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** How every --ledger help names the rule (src/ledger/ref.ts resolveLedger). */
export const LEDGER_OPTION_HELP =
  'default: ledger.url / env SVC_LEDGER_URL, else send.ledgerPath / env SVC_LEDGER_PATH; a file given here ' +
  'while SVC_LEDGER_URL is set is used, and a warning says so';

/** Adds a repeatable `--ledger PATH|URL` (read-only commands read every ledger file given, or one PostgreSQL ledger). */
export function addLedgerOption(cmd: Command): Command {
  return cmd.option(
    '--ledger <path|url>',
    `ledger to read: files (repeat to read several) or one postgres:// URL (${LEDGER_OPTION_HELP})`,
    collect,
  );
}

/**
 * True when an address to listen on never takes connections from other machines (127.x, ::1, localhost).
 * @example isLoopbackBind('::1') === true; isLoopbackBind('0.0.0.0') === false
 */
export function isLoopbackBind(host: string): boolean {
  const h = host.trim();
  return isLoopbackHost(h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);
}
