// The bin entry: the one place that touches the real process (its argv, streams, environment, signals and exit
// status); the CLI itself is main() in run.ts. `--version` alone is answered here, before commander, the logger
// and the masking rules are loaded (they are the rest of a start: docs/performance.md, "Start-up").
import { writeSync } from 'node:fs';
import { versionLine } from '../version.ts';

/**
 * A Node older than 22.18 is refused in the launcher's words (src/bin/svc-ingest): the launcher asks a Node its version
 * only until it has noted it fit, and a Node put in the noted one's place since, with an older file time, comes here.
 */
function refuseOldNode(): void {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 18)) return;
  const msg = `svc-ingest: no supported Node.js (>= 22.18) found; node is ${process.version} (${process.execPath}); install Node.js 22 or 24 LTS (Debian/Ubuntu: curl -fsSL https://deb.nodesource.com/setup_24.x | bash - && apt-get install -y nodejs; RHEL-family: curl -fsSL https://rpm.nodesource.com/setup_24.x | bash - && dnf install -y nodejs), or set SVC_INGEST_NODE to a node >= 22.18`;
  const args = process.argv.slice(2).join(' ');
  const asked = / --log-format[ =](text|json) /.exec(` ${args} `)?.[1] ?? process.env.SVC_LOG_FORMAT;
  const json = asked === 'json' || (asked !== 'text' && !process.stderr.isTTY);
  process.stderr.write(
    json
      ? `${JSON.stringify({ level: 50, time: new Date().toISOString(), pid: process.pid, event: 'cli.error', code: 'NODE_UNSUPPORTED', exitStatus: 1, msg })}\n`
      : `${msg}\n`,
  );
  process.exit(1);
}
refuseOldNode();

/** A closed pipe on stdout (`svc-ingest … | head`) ends the command quietly, as other Unix tools do. */
function closedPipeEndsQuietly(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
}

/**
 * The version line, written to fd 1 directly: process.stdout is a stream, whose first use loads Node's stream modules
 * (~5 ms of CPU, a sixth of a `--version`). A closed pipe ends quietly, as above; anything else (a full non-blocking
 * pipe, a closed fd 1) takes the rest through the stream, as before.
 */
function printVersion(): void {
  const line = Buffer.from(`${versionLine()}\n`);
  let done = 0;
  try {
    while (done < line.length) done += writeSync(1, line, done);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') return;
    closedPipeEndsQuietly();
    process.stdout.write(line.subarray(done));
  }
}

// Node's own warnings (a deprecation in a dependency) come as log lines too, not as text between them; the
// logger's module is loaded for the first one.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  void import('../log.ts').then(({ stderrLine }) =>
    stderrLine('warn', 'node.warning', `${w.name}: ${w.message}`),
  );
});

// No top-level await: the single executable's bundle is CommonJS (docs/install.md).
// `svc-ingest --version` (or -V) and nothing else: what commander would print. With anything beside it (an option
// whose value commander checks first), commander answers as before.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) printVersion();
else {
  closedPipeEndsQuietly();
  void Promise.all([import('../io.ts'), import('./run.ts')]).then(([{ processIo }, { main }]) =>
    main(process.argv, processIo()).then((status) => {
      process.exitCode = status;
    }),
  );
}
