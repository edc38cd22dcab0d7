// docs/mapping.md's `svc-ingest … # exit N` examples (first-of, zones from the merchant, expand, mapping check's
// warnings, an option that would do nothing, a built-in profile on a foreign export), run through the real CLI.
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.ts';
import { describeDocExamples } from '../helpers/doc-examples.ts';

describeDocExamples(join(ROOT, 'docs/mapping.md'));
