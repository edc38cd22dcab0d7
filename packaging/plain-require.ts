// An esbuild plugin the CommonJS bundles share (packaging/sea.ts, packaging/bundle.ts).
import { readFileSync } from 'node:fs';
import type { Plugin } from 'esbuild';

/**
 * `createRequire(import.meta.url)('x')` (the lazy loads of pino-pretty, undici's Agent, re2js, the lock's addon) as a
 * plain `require('x')`: esbuild follows it into the bundle, or leaves it to Node's require when `x` is external.
 */
export const plainRequire: Plugin = {
  name: 'plain-require',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8')
        .replace(/^const require = createRequire\(import\.meta\.url\);$/m, '')
        .replaceAll('createRequire(import.meta.url)', 'require');
      return { contents: text, loader: 'ts' };
    });
  },
};
