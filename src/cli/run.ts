// The CLI as a function: `main(argv, io)` declares the commands, parses `argv` and turns errors into the exit
// status it returns. Everything outside the run (streams, environment, signals) comes in `io` (src/io.ts): the bin
// entry (main.ts) passes the real process's, a test its own (test/helpers/cli.ts runCliHere). Each run builds its
// own program: nothing of one run is left for the next.
import { Command, CommanderError, Option } from 'commander';
import { type ErrorCode, EXIT, ExitError, exitStatusOf, SvcIngestError } from '../errors.ts';
import { type CliIo, withIo } from '../io.ts';
import { LOG_FORMATS, type LogFormat, setLogFormat, stderrLine } from '../log.ts';
import { maskCardNumbers } from '../mask/index.ts';
import { VERSION, versionLine } from '../version.ts';
import { addExamples } from './common.ts';

function createProgram(argv: string[], io: CliIo): Command {
  const program = new Command('svc-ingest')
    .description(
      'Feed card transactions into the card-linked-offer service, in acknowledged batches with a ledger,\n' +
        'and check what came back (redemptions, store locations, tickets).',
    )
    // The commit is looked up only when asked (`--version`): in a clone it costs a `git` run.
    .version(argv.includes('--version') || argv.includes('-V') ? versionLine() : VERSION)
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
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => stderrLine('info', 'cli.usage', text),
      // commander's own rule (the terminal's width, else its default), asked of the run's streams.
      getOutHelpWidth: () => (io.stdout.isTTY ? io.stdout.columns : undefined) as number,
      getErrHelpWidth: () => (io.stderr.isTTY ? io.stderr.columns : undefined) as number,
      // No help text of ours is coloured; commander would otherwise ask process.stdout.
      getOutHasColors: () => false,
      getErrHasColors: () => false,
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
  addExamples(program, [
    [
      'svc-ingest send --mapping northwind-csv samples/northwind.csv',
      'send an export through a mapping profile',
    ],
    ['svc-ingest send --dry-run exports/2026-11-20.csv', 'read, map and validate only'],
    ['svc-ingest reconcile --customer cust-0001', "match a customer's redemptions to the ledger"],
    ['svc-ingest help send', "a command's options, exit statuses and examples"],
  ]);
  return program;
}

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

async function declareCommands(program: Command, args: string[]): Promise<void> {
  const name = commandNamed(args);
  // `--version` (the program's own option, first) prints and exits: no command's module is needed.
  if (name === '--version' || name === '-V') return;
  const named = COMMANDS.filter(([names]) => name !== undefined && names.includes(name));
  const modules = await Promise.all((named.length > 0 ? named : COMMANDS).flatMap(([, load]) => load()));
  for (const mod of modules) mod.define(program);
}

/**
 * `svc-ingest help tickets create` → `svc-ingest tickets create --help`: commander's own help command looks one
 * level deep only, and would print the parent's help. A word that names no sub-command is left for commander
 * to refuse ("unknown command").
 */
function helpArgv(program: Command, argv: string[]): string[] {
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

/**
 * `--log-format` (or env SVC_LOG_FORMAT) decides stderr's form before commander parses, so that its own usage errors
 * come in that form too; a value that is neither is refused by commander (the option's choices) or here (the env).
 */
function chooseLogFormat(options: string[], io: CliIo): void {
  const at = options.findIndex((a) => a === '--log-format' || a.startsWith('--log-format='));
  const given = at === -1 ? undefined : (options[at]!.split('=')[1] ?? options[at + 1]);
  if (LOG_FORMATS.includes(given as LogFormat)) setLogFormat(given as LogFormat);
  const env = io.env.SVC_LOG_FORMAT;
  if (env !== undefined && env !== '' && !LOG_FORMATS.includes(env as LogFormat))
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `SVC_LOG_FORMAT: expected text or json, got ${JSON.stringify(env)}`,
    );
}

/** A control character (a line break in a file name) written as its escape, so the error stays one line. */
function oneLine(text: string): string {
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  return text.replace(
    /[\u0000-\u001f\u007f]/g,
    (c) => named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * One line on stderr (`svc-ingest: CODE: message`); with --json (`jsonMode`) also `{"error":{code,message}}` on
 * stdout, so a pipeline step can parse it. Returns the exit status.
 */
function fail(
  io: CliIo,
  jsonMode: boolean,
  code: ErrorCode | 'UNEXPECTED',
  message: string,
  status: number,
  humanShown = false,
): number {
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
  if (jsonMode) io.stdout.write(`${JSON.stringify({ error: { code, message: text } })}\n`);
  return status;
}

/**
 * Runs the CLI on `argv` (as process.argv: the program and script first) with `io`, and returns its exit status.
 * @example const status = await main(['node', 'svc-ingest', 'ledger', 'status', '--json'], io)
 */
export function main(argv: string[], io: CliIo): Promise<number> {
  return withIo(io, async () => {
    const program = createProgram(argv, io);
    await declareCommands(program, argv);
    const args = helpArgv(program, argv);
    const end = args.indexOf('--');
    const options = args.slice(2, end === -1 ? undefined : end);
    const jsonMode = options.some((a) => a === '--json' || a === '--ndjson');
    try {
      chooseLogFormat(options, io);
      await program.parseAsync(args);
      return EXIT.OK;
    } catch (err) {
      if (err instanceof ExitError) return err.exitCode;
      if (err instanceof CommanderError)
        // commander already printed the message (or the help); help and version end with 0.
        return err.exitCode === 0
          ? 0
          : fail(io, jsonMode, 'USAGE_INVALID', err.message.replace(/^error: /, ''), 1, true);
      if (err instanceof SvcIngestError) return fail(io, jsonMode, err.code, err.message, exitStatusOf(err));
      const status = fail(io, jsonMode, 'UNEXPECTED', err instanceof Error ? err.message : String(err), 1);
      if (io.env.SVC_DEBUG) stderrLine('debug', 'cli.stack', (err as Error)?.stack ?? '');
      return status;
    }
  });
}
