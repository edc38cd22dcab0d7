// `svc-ingest stores`: placeholder until the command lands.
import type { Command } from 'commander';

export function define(program: Command): void {
  program.command('stores').description('(not implemented yet)');
}
