// Every example of the support documentation runs as documented (test/helpers/doc-examples.ts): the README's
// support section and docs/support.md, each against a fresh simulator.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { describeDocExamples, shellWords } from '../helpers/doc-examples.ts';

it('splits command lines as a shell does', () => {
  expect(
    shellWords(`svc-ingest tickets create --description "Reward not \\"credited\\"" --x 'a b' c\\ d`),
  ).toEqual([
    'svc-ingest',
    'tickets',
    'create',
    '--description',
    'Reward not "credited"',
    '--x',
    'a b',
    'c d',
  ]);
});

describeDocExamples(join(ROOT, 'README.md'));
describeDocExamples(join(ROOT, 'docs/support.md'));
