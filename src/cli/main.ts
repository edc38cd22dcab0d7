// CLI entry: declares the commands and turns errors into exit statuses. The only place that exits.
import { Command, CommanderError, Option } from 'commander';
import { type ErrorCode, ExitError, exitStatusOf, SvcIngestError } from '../errors.ts';
import { LOG_FORMATS, type LogFormat, setLogFormat, stderrLine } from '../log.ts';
import { maskCardNumbers } from '../mask.ts';
import { VERSION, versionLine } from '../version.ts';
import { addExamples } from './common.ts';

// A closed pipe on stdout (`svc-ingest … | head`) ends the command quietly, as other Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

const program = new Command('svc-ingest')
  .description(
    'Feed card transactions into the card-linked-offer service, in acknowledged batches with a ledger,\n' +
      'and check what came back (redemptions, store locations, tickets).',
  )
  // The commit is looked up only when asked (`--version`): in a clone it costs a `git` run.
  .version(process.argv.includes('--version') || process.argv.includes('-V') ? versionLine() : VERSION)
  .addOption(
    new Option(
      '--log-format <format>',
      'stderr as text (for a person) or json (one object a line, for a log collector); env SVC_LOG_FORMAT; default: text on a terminal, json elsewhere',
    ).choices(LOG_FORMATS),
  )
  // commander echoes arguments in its errors ("unknown option '--…'"); masked like every line we print. Its
  // usage errors are one line like every other error: `svc-ingest: USAGE_INVALID: … (run with --help for usage)`,
  // and what else it writes on stderr (a command group's help, when no sub-command is named) is one line in JSON.
  .configureOutput({
    writeErr: (text) => stderrLine('info', 'cli.usage', text),
    outputError: (text) =>
      stderrLine(
        'error',
        'cli.error',
        `svc-ingest: USAGE_INVALID: ${text
          .replace(/^error: /, '')
          .trimEnd()
          .replace(/\s*\n\s*/g, ' ')} (run with --help for usage)`,
        { code: 'USAGE_INVALID', exitStatus: 1 },
      ),
  })
  .exitOverride();

interface CommandModule {
  define(program: Command): void;
}

/**
 * Each command's module, by the name it is run by, in the order `--help` lists them. `ledger` declares the command
 * group; `ledger migrate` and `ledger prune` add themselves to it, so they come after.
 */
const COMMANDS: ReadonlyArray<readonly [string[], () => Promise<CommandModule>[]]> = [
  [['send'], () => [import('./send.ts')]],
  [['map'], () => [import('./map.ts')]],
  [['mappings', 'mapping'], () => [import('./mapping.ts')]],
  [['simulate'], () => [import('./simulate.ts')]],
  [['redemptions'], () => [import('./redemptions.ts')]],
  [['stores'], () => [import('./stores.ts')]],
  [['tickets'], () => [import('./tickets.ts')]],
  [['reconcile'], () => [import('./reconcile.ts')]],
  [['trace'], () => [import('./trace.ts')]],
  [['backfill'], () => [import('./backfill.ts')]],
  [
    ['ledger'],
    () => [
      import('./ledger.ts'),
      import('./ledger-migrate.ts'),
      import('./ledger-prune.ts'),
      import('./ledger-grant.ts'),
    ],
  ],
];

/**
 * The command named on the command line (the first word that is not a global option), or undefined. Only its
 * module is loaded and declared: a start then loads one command's code, not all thirteen (~12 ms of CPU a run,
 * docs/commands.md). Anything else (`--help`, `help …`, a misspelt command) declares them all, so commander can
 * list them and suggest the nearest name.
 */
function commandNamed(args: string[]): string | undefined {
  for (let i = 2; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--log-format') i++;
    else if (!a.startsWith('--log-format=')) return a;
  }
  return undefined;
}

async function declareCommands(args: string[]): Promise<void> {
  const name = commandNamed(args);
  // `--version` (the program's own option, first) prints and exits: no command's module is needed.
  if (name === '--version' || name === '-V') return;
  const named = COMMANDS.filter(([names]) => name !== undefined && names.includes(name));
  const modules = await Promise.all((named.length > 0 ? named : COMMANDS).flatMap(([, load]) => load()));
  for (const mod of modules) mod.define(program);
}
addExamples(program, [
  [
    'svc-ingest send --mapping northwind-csv samples/northwind.csv',
    'send an export through a mapping profile',
  ],
  ['svc-ingest send --dry-run exports/2026-11-20.csv', 'read, map and validate only'],
  ['svc-ingest reconcile --customer cust-0001', "match a customer's redemptions to the ledger"],
  ['svc-ingest help send', "a command's options, exit statuses and examples"],
]);

/**
 * `svc-ingest help tickets create` → `svc-ingest tickets create --help`: commander's own help command looks one
 * level deep only, and would print the parent's help. A word that names no sub-command is left for commander
 * to refuse ("unknown command").
 */
function helpArgv(argv: string[]): string[] {
  const words = argv.slice(3);
  if (argv[2] !== 'help' || words.length === 0 || words.some((a) => a.startsWith('-'))) return argv;
  let cmd: Command = program;
  for (let i = 0; i < words.length; i++) {
    const next = cmd.commands.find((c) => c.name() === words[i] || c.aliases().includes(words[i]!));
    if (!next) return [...argv.slice(0, 2), ...words.slice(0, i + 1)];
    cmd = next;
  }
  return [...argv.slice(0, 2), ...words, '--help'];
}

// No top-level await from here on: the single executable's bundle is CommonJS (docs/install.md), so the commands are
// declared and parsed in main() below.
let argv = process.argv;
/**
 * A `--json` (or `--ndjson`) run answers a failure to run with one JSON object on stdout too, so a pipeline step
 * can parse it.
 */
let options: string[] = [];
let jsonMode = false;

/**
 * `--log-format` (or env SVC_LOG_FORMAT) decides stderr's form before commander parses, so that its own usage errors
 * come in that form too; a value that is neither is refused by commander (the option's choices) or here (the env).
 */
function chooseLogFormat(): void {
  const at = options.findIndex((a) => a === '--log-format' || a.startsWith('--log-format='));
  const given = at === -1 ? undefined : (options[at]!.split('=')[1] ?? options[at + 1]);
  if (LOG_FORMATS.includes(given as LogFormat)) setLogFormat(given as LogFormat);
  const env = process.env.SVC_LOG_FORMAT;
  if (env !== undefined && env !== '' && !LOG_FORMATS.includes(env as LogFormat))
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `SVC_LOG_FORMAT: expected text or json, got ${JSON.stringify(env)}`,
    );
}

// Node's own warnings (a deprecation in a dependency) come as log lines too, not as text between them.
process.removeAllListeners('warning');
process.on('warning', (w) => stderrLine('warn', 'node.warning', `${w.name}: ${w.message}`));

/** A control character (a line break in a file name) written as its escape, so the error stays one line. */
function oneLine(text: string): string {
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  return text.replace(
    /[\u0000-\u001f\u007f]/g,
    (c) => named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** One line on stderr (`svc-ingest: CODE: message`); with --json also `{"error":{code,message}}` on stdout. */
function fail(code: ErrorCode | 'UNEXPECTED', message: string, status: number, humanShown = false): void {
  const text = oneLine(maskCardNumbers(message));
  if (!humanShown)
    stderrLine(
      'error',
      'cli.error',
      `svc-ingest: ${code === 'UNEXPECTED' ? 'unexpected error' : code}: ${text}`,
      {
        code,
        exitStatus: status,
      },
    );
  if (jsonMode) process.stdout.write(`${JSON.stringify({ error: { code, message: text } })}\n`);
  process.exitCode = status;
}

async function main(): Promise<void> {
  await declareCommands(process.argv);
  argv = helpArgv(process.argv);
  const end = argv.indexOf('--');
  options = argv.slice(2, end === -1 ? undefined : end);
  jsonMode = options.some((a) => a === '--json' || a === '--ndjson');
  try {
    chooseLogFormat();
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof ExitError) {
      process.exitCode = err.exitCode;
    } else if (err instanceof CommanderError) {
      // commander already printed the message (or the help); help and version end with 0.
      if (err.exitCode === 0) process.exitCode = 0;
      else fail('USAGE_INVALID', err.message.replace(/^error: /, ''), 1, true);
    } else if (err instanceof SvcIngestError) {
      fail(err.code, err.message, exitStatusOf(err));
    } else {
      fail('UNEXPECTED', err instanceof Error ? err.message : String(err), 1);
      if (process.env.SVC_DEBUG) stderrLine('debug', 'cli.stack', (err as Error)?.stack ?? '');
    }
  }
}

void main();
