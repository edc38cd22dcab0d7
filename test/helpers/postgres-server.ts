// vitest's globalSetup: one PostgreSQL server for the whole run, shared by the test files (usePostgres in
// postgres.ts), each test in databases of its own. A server's start (initdb, then start) costs about 1.5 s of CPU;
// started once instead of once per file, that is some 40 s of CPU off a run of the suite on two cores. Its data
// folder as initdb made it is kept (postgres.ts, PostgresTemplate) for the servers of the files that need their own.
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Six files at once (maxWorkers), each with its CLI runs' pools (10 connections each at most) and its own clients.
  const server = await startPostgres({ maxConnections: 300, makeTemplate: true });
  project.provide('postgres', { port: server.port, user: server.user, password: server.password });
  // Its data folder as initdb made it: the servers a test file starts of its own copy it, no initdb of theirs.
  project.provide('postgresTemplate', server.template);
  return () => server.stop();
}
