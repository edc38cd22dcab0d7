// The bin entry: the one place that touches the real process (its argv, streams, environment, signals and exit
// status); the CLI itself is main() in run.ts.
import { processIo } from '../io.ts';
import { stderrLine } from '../log.ts';
import { main } from './run.ts';

// A closed pipe on stdout (`svc-ingest … | head`) ends the command quietly, as other Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

// Node's own warnings (a deprecation in a dependency) come as log lines too, not as text between them.
process.removeAllListeners('warning');
process.on('warning', (w) => stderrLine('warn', 'node.warning', `${w.name}: ${w.message}`));

// No top-level await: the single executable's bundle is CommonJS (docs/install.md).
void main(process.argv, processIo()).then((status) => {
  process.exitCode = status;
});
