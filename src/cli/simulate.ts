// `svc-ingest simulate`: placeholder until the command lands.
import type { Command } from 'commander';

export function define(program: Command): void {
  program.command('simulate').description('(not implemented yet)');
}
