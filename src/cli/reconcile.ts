// `svc-ingest reconcile`: placeholder until the command lands.
import type { Command } from 'commander';

export function define(program: Command): void {
  program.command('reconcile').description('(not implemented yet)');
}
