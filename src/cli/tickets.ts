// `svc-ingest tickets`: placeholder until the command lands.
import type { Command } from 'commander';

export function define(program: Command): void {
  program.command('tickets').description('(not implemented yet)');
}
