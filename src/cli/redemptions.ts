// `svc-ingest redemptions`: placeholder until the command lands.
import type { Command } from 'commander';

export function define(program: Command): void {
  program.command('redemptions').description('(not implemented yet)');
}
