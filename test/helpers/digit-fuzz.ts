// The digit-context fuzz of the card-number rule (issue 30): a random card number of a random brand, written whole
// or in its printed groups, among random digit groups joined by random separators (a second card number sharing a
// run now and then); the masked text must hold no 12 digits of it in a row. Seeded: the suite runs 100,000 cases
// (test/mask/digit-fuzz.test.ts), `make bench BENCH_ARGS="--only pan"` 1,000,000.
import { rng } from './false-positives.ts';
import { withCheckDigit } from './pans.ts';

/** Brand prefixes and lengths the cards are drawn from. */
const BRANDS: Array<[string, number[]]> = [
  ['4', [13, 16, 19]],
  ['51', [16]],
  ['55', [16]],
  ['2221', [16]],
  ['2720', [16]],
  ['34', [15]],
  ['37', [15]],
  ['6011', [16, 19]],
  ['65', [16, 17, 18, 19]],
  ['3528', [16, 19]],
  ['36', [14]],
  ['62', [16, 17, 18, 19]],
  ['50', [13, 15, 18]],
  ['81', [16]],
];
const SEPS = [' ', '-', '.', '/', '\u00a0', ' \u200e', '\u2028', '%20', ', ', '\t', '·', '\n'];

function digitsOf(next: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String(next() % 10);
  return s;
}

/** A random card number: a brand prefix, random digits, the check digit. */
export function randomCard(next: () => number): string {
  const [prefix, lens] = BRANDS[next() % BRANDS.length] as [string, number[]];
  const len = lens[next() % lens.length] as number;
  return withCheckDigit(prefix + digitsOf(next, len - prefix.length - 1));
}

function printed(card: string, sep: string): string {
  const lens = card.length === 15 ? [4, 6, 5] : card.length === 14 ? [4, 6, 4] : [];
  if (lens.length === 0) for (let left = card.length; left > 0; left -= 4) lens.push(Math.min(4, left));
  const out: string[] = [];
  let at = 0;
  for (const len of lens) {
    out.push(card.slice(at, at + len));
    at += len;
  }
  return out.join(sep);
}

/** One case: the text, and the card numbers in it. */
export interface FuzzCase {
  text: string;
  cards: string[];
}

/** `n` seeded cases, one at a time. */
export function* digitFuzz(n: number, seed = 30): Generator<FuzzCase> {
  const next = rng(seed);
  const context = (): string => {
    const parts: string[] = [];
    const k = next() % 4;
    for (let i = 0; i < k; i++) parts.push(digitsOf(next, 1 + (next() % 8)));
    return parts.join(SEPS[next() % SEPS.length] as string);
  };
  for (let i = 0; i < n; i++) {
    const card = randomCard(next);
    const sep = SEPS[next() % SEPS.length] as string;
    const written = next() % 3 === 0 ? card : printed(card, sep);
    const cards = [card];
    const before = context();
    const after = context();
    const join = SEPS[next() % SEPS.length] as string;
    let text = `${before ? `${before}${join}` : ''}${written}${after ? `${join}${after}` : ''}`;
    if (next() % 4 === 0) {
      // A second card number in the same run.
      const other = randomCard(next);
      cards.push(other);
      text = next() % 2 === 0 ? `${text}${join}${printed(other, sep)}` : `${other}${join}${text}`;
    }
    yield { text: next() % 2 === 0 ? `REF ${text}` : text, cards };
  }
}

/** The cards of which 12 digits in a row (separators and masks taken out) are in the text. */
export function piecesLeft(text: string, cards: string[]): string[] {
  const digits = text.replace(/%20/g, ' ').replace(/[^0-9]/g, '');
  return cards.filter((c) => {
    for (let a = 0; a + 12 <= c.length; a++) if (digits.includes(c.slice(a, a + 12))) return true;
    return false;
  });
}
