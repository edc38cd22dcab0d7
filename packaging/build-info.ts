// `npm run build` (and so `npm pack`): writes dist/build-info.json, the commit the package is built from, which
// `svc-ingest --version` prints (src/version.ts). Usage: node packaging/build-info.ts dist/build-info.json
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gitCommit } from '../src/version.ts';

const out = process.argv[2] ?? 'dist/build-info.json';
const commit = gitCommit(path.resolve(import.meta.dirname, '..')) ?? 'commit unknown';
writeFileSync(out, `${JSON.stringify({ commit })}\n`);
