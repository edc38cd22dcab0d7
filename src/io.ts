// What a CLI run talks to outside itself: its standard streams, environment, working folder, signals and exit.
// One value a run (`main(argv, io)`, src/cli/run.ts), kept in an AsyncLocalStorage for the code below the command;
// the bin entry (src/cli/main.ts) passes the real process's, a test one of its own (several runs can share a
// process, one after another or at once, each with its own streams and environment).
import { AsyncLocalStorage } from 'node:async_hooks';
import { holdOldGeneration } from './runtime/heap-growth.ts';

/** A stream a run writes its text on (stdout, stderr): a terminal's tells its width. */
export type TextOut = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export interface CliIo {
  stdout: TextOut;
  stderr: TextOut;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; destroy?(): unknown };
  env: NodeJS.ProcessEnv;
  /** Installs a handler of SIGINT and SIGTERM; returns what removes it. A test's io never delivers one. */
  onSignal(handler: (signal: NodeJS.Signals) => void): () => void;
  /** Ends the process at once (a second signal): only a process's io can. */
  exit(code: number): never;
  /** `--log-format` when given (src/log.ts logFormat). */
  logFormat?: 'text' | 'json';
  /** The live line shown on stderr, '' when none (src/log.ts liveLine). */
  liveText?: string;
  /**
   * Holds V8's old generation to twice its live size for the rest of the process (src/runtime/heap-growth.ts): called where
   * a long run's work starts, once the modules it needs are loaded. Only a process's io has it: the heap is the
   * process's, and a test's runs share one.
   */
  holdHeap?(): void;
}

const current = new AsyncLocalStorage<CliIo>();
let processIoValue: CliIo | undefined;

/** The real process's streams, environment and signals: the bin entry's, and the io of code run outside a run. */
export function processIo(): CliIo {
  processIoValue ??= {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    onSignal(handler) {
      process.on('SIGINT', handler);
      process.on('SIGTERM', handler);
      return () => {
        process.off('SIGINT', handler);
        process.off('SIGTERM', handler);
      };
    },
    exit: (code) => process.exit(code),
    holdHeap: () => {
      holdOldGeneration();
    },
  };
  return processIoValue;
}

/** The io of the run in progress (the process's outside one). */
export function cliIo(): CliIo {
  return current.getStore() ?? processIo();
}

/** True when the io in force is the real process's (fd 2 is then written synchronously, src/log.ts). */
export function isProcessIo(io: CliIo): boolean {
  return io === processIoValue;
}

/** Runs `fn` with `io` as the io in force for everything it calls, awaits and schedules. */
export function withIo<T>(io: CliIo, fn: () => Promise<T>): Promise<T> {
  return current.run(io, fn);
}
