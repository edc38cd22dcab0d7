// The card-number rule's pre-check (mayHoldCard, src/mask/rule.ts) against its definition, written here the plain
// way: 13 digits in one run, a letter starting the count again, and an escape's first character (`%`, `&`, `\`)
// anywhere leaving the answer to the count of every digit in the text. The pre-check stops early (at a letter with
// fewer than 13 characters after it); this checks it answers as the plain reading does on 400,000 seeded texts of
// digits, letters, separators, escapes, non-ASCII digits and unseen characters, near and around the 13-digit edge.
import { describe, expect, it } from 'vitest';
import { BMP, classAt, DIGIT, LETTER } from '../../src/mask/chars.ts';
import { hasThirteenDigits, mayHoldCard } from '../../src/mask/rule.ts';
import { rng } from '../helpers/false-positives.ts';

/** The plain reading: every character classified, no early stop. */
function plain(text: string, letterEnds: boolean): boolean {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (letterEnds && (c === 37 || c === 38 || c === 92)) return plain(text, false);
    const k = c < 128 ? (BMP[c] as number) : classAt(text, i);
    if (k >= DIGIT) {
      if (++count === 13) return true;
    } else if (letterEnds && k === LETTER) count = 0;
  }
  return false;
}

// The first 7 are digits; '٣' an Arabic-Indic digit, U+200B an unseen character, 'é' a letter.
const PARTS = [...'0147952', ...'aFxé- ./%&\\', '٣', '\u200b', '+'];
/** Their UTF-16 codes (each is one), and the text under construction. */
const CODES = PARTS.map((p) => p.charCodeAt(0));
const codes: number[] = [];

describe('the pre-check of the card-number rule', () => {
  it('answers as the plain reading on 400,000 seeded texts of 0-40 characters', () => {
    const next = rng(33);
    const differ: string[] = [];
    let yes = 0;
    for (let n = 0; n < 400_000; n++) {
      const len = next() % 41;
      // A text mostly of digits and a few of the others, so both answers occur.
      const digitShare = next() % 10;
      codes.length = 0;
      for (let i = 0; i < len; i++)
        codes.push(
          next() % 10 < digitShare ? (CODES[next() % 7] as number) : (CODES[7 + (next() % 14)] as number),
        );
      // One flat string (built a character at a time, it is a chain of pieces every charCodeAt walks).
      const t = String.fromCharCode(...codes);
      const want = plain(t, true);
      if (want) yes++;
      if (mayHoldCard(t) !== want && differ.length < 5) differ.push(JSON.stringify(t));
      if (hasThirteenDigits(t) !== plain(t, false) && differ.length < 5)
        differ.push(`any: ${JSON.stringify(t)}`);
    }
    expect(differ).toEqual([]);
    // Both answers are well represented.
    expect(yes).toBeGreaterThan(40_000);
    expect(yes).toBeLessThan(360_000);
  });

  it('an escape after the last letter still counts every digit', () => {
    // 12 digits, a letter with fewer than 13 characters after it, then an escape and a 13th digit.
    expect(mayHoldCard('1234567 89012x%3')).toBe(true);
    expect(mayHoldCard('1234567 89012x-3')).toBe(false);
    expect(mayHoldCard('abcdef1234567890123')).toBe(true);
    expect(mayHoldCard('123456789012a3')).toBe(false);
  });
});
