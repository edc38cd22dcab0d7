// `svc-ingest send`: placeholder until the command lands.
import type { Command } from 'commander';

export function define(program: Command): void {
  program.command('send').description('(not implemented yet)');
}
