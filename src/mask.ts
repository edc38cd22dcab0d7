// Card numbers: the one rule for what is a card number, how it is masked, and when an id holds one.
//
// A card number is 13-19 digits passing the Luhn check (the rule a capture server scanning our traffic
// applies), zeros only excepted. Digits count as one number when only spaces, dashes, dots or slashes stand between them
// (`4111 1111 1111 1111`, `4111.1111.1111.1111`; below, PAN16 stands for such a number written without
// separators), so a "digit run" is a maximal stretch of digits
// joined by those separators. Two readings of a run:
// - anything we store or print (free text, messages, keys, logs): every 13-19-digit window of every run
//   is checked, so a card number next to other digits (`1234 PAN16`) is found and masked;
// - an id, code or amount we send: only whole digit groups (maximal runs of digits) and contiguous
//   sequences of them are candidates, leading zeros being padding (no card number starts with 0), so a
//   23-digit reference number is not a card number because some 16 digits inside it pass Luhn, nor is
//   a zero-padded `00000000000` + `12345`, while `PAN16-01` holds one (see holdsCardNumberId).

/** Luhn check of a string of ASCII digits (no separators). */
export function luhnValid(digits: string): boolean {
  return digits.length > 0 && luhnAt(digits, 0, digits.length);
}

/** Luhn check of text[a, b), which must be ASCII digits (false when one is not). */
function luhnAt(text: string, a: number, b: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = b - 1; i >= a; i--) {
    let d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Mask a card number: first 6 and last 4 digits kept, the rest as `*` (separators dropped).
 * Shorter inputs keep less: under 13 digits only the last 4 stay, 4 digits or fewer become all `*`.
 * @example maskPan(testPan) // '411111******1111' for the Visa test number 4111 1111 1111 1111
 */
export function maskPan(digits: string): string {
  const d = digits.replace(/[^0-9]/g, '');
  const n = d.length;
  if (n <= 4) return '*'.repeat(n);
  if (n < 13) return '*'.repeat(n - 4) + d.slice(-4);
  return d.slice(0, 6) + '*'.repeat(n - 10) + d.slice(-4);
}

const MIN = 13;
const MAX = 19;
/** Digits kept at each end of a masked card number. */
const KEEP_HEAD = 6;
const KEEP_TAIL = 4;
/** Digits a masked 16-digit card number hides: a window with as many hidden is as safe as one masked. */
const ENOUGH_HIDDEN = 6;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
/** Space, dash, dot, slash: what may stand between the digits of one written number. */
function isSeparator(c: number): boolean {
  return c === 32 || c === 45 || c === 46 || c === 47;
}

/**
 * The cheap pre-check every caller starts with: does the text hold 13 ASCII digits at all? One pass of
 * charCodeAt, stopping at the 13th digit; most values (names, codes, short ids) end it at once.
 * @example hasThirteenDigits('tx-000123') // false
 */
export function hasThirteenDigits(text: string): boolean {
  const n = text.length;
  if (n < MIN) return false;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57 && ++count === MIN) return true;
  }
  return false;
}

/**
 * One digit run of a text: its digits (separators left out), where each sits in the text, and where each
 * digit group (a maximal stretch of adjacent digits) starts, as an index into the digits. `end` is the
 * index in the text after it.
 */
interface Run {
  digits: string;
  at: number[];
  groups: number[];
  end: number;
}

/** The digit run starting at text[start] (a digit). */
function readRun(text: string, start: number): Run {
  let digits = '';
  const at: number[] = [];
  const groups: number[] = [0];
  const n = text.length;
  let i = start;
  for (;;) {
    const from = i;
    while (i < n && isDigit(text.charCodeAt(i))) {
      at.push(i);
      i++;
    }
    digits += text.slice(from, i);
    let j = i;
    while (j < n && isSeparator(text.charCodeAt(j))) j++;
    if (j === i || j >= n || !isDigit(text.charCodeAt(j))) break;
    groups.push(digits.length);
    i = j;
  }
  return { digits, at, groups, end: i };
}

/**
 * Every Luhn-valid window of 13-19 digits of a run, as [start, end) pairs into its digits. Prefix sums
 * by parity make each window O(1), so a hostile megabyte of digits costs a few passes, not 19 per window.
 */
function cardWindows(digits: string): number[] {
  const m = digits.length;
  const out: number[] = [];
  if (m < MIN) return out;
  // plain[p][i]: sum of digits k < i with k % 2 === p; doubled[p][i]: the same of the doubled digits.
  const plain0 = new Int32Array(m + 1);
  const plain1 = new Int32Array(m + 1);
  const dbl0 = new Int32Array(m + 1);
  const dbl1 = new Int32Array(m + 1);
  // Non-zero digits before k: a window of zeros only passes Luhn but is no number at all.
  const nonZero = new Int32Array(m + 1);
  for (let k = 0; k < m; k++) {
    const d = digits.charCodeAt(k) - 48;
    nonZero[k + 1] = (nonZero[k] as number) + (d === 0 ? 0 : 1);
    const dd = d * 2 > 9 ? d * 2 - 9 : d * 2;
    const odd = k & 1;
    plain0[k + 1] = (plain0[k] as number) + (odd ? 0 : d);
    plain1[k + 1] = (plain1[k] as number) + (odd ? d : 0);
    dbl0[k + 1] = (dbl0[k] as number) + (odd ? 0 : dd);
    dbl1[k + 1] = (dbl1[k] as number) + (odd ? dd : 0);
  }
  for (let b = MIN; b <= m; b++) {
    // The last digit (b - 1) is not doubled; every other one going left is.
    const lastOdd = (b - 1) & 1;
    const plain = lastOdd ? plain1 : plain0;
    const dbl = lastOdd ? dbl0 : dbl1;
    const lo = Math.max(0, b - MAX);
    for (let a = b - MIN; a >= lo; a--) {
      const sum = (plain[b] as number) - (plain[a] as number) + (dbl[b] as number) - (dbl[a] as number);
      if (sum % 10 === 0 && nonZero[b] !== nonZero[a]) out.push(a, b);
    }
  }
  return out;
}

/** The run's text with its card numbers masked, or undefined when it holds none. */
function maskRun(text: string, start: number, run: Run): string | undefined {
  const { digits, at, groups } = run;
  const m = digits.length;
  const windows = cardWindows(digits);
  if (windows.length === 0) return undefined;
  const slice = text.slice(start, run.end);
  // The whole run is one card number: the usual masked form, separators dropped. (Not when it starts with a
  // zero, which no card number does: `0/4111…` in a path is a card number after a digit, masked in place.)
  if (m <= MAX && digits.charCodeAt(0) !== 48) {
    for (let w = 0; w < windows.length; w += 2) {
      if (windows[w] === 0 && windows[w + 1] === m) return maskPan(slice);
    }
  }
  // Otherwise every Luhn-valid window ends with as many digits hidden as the usual masking would hide of it
  // (all but its first 6 and last 4, at most 6 needed: what a masked 16-digit card number hides), so what is
  // left holds no Luhn-valid window and none can be guessed back from its check digit. Windows along digit
  // groups come first (a number as written: `1234 PAN16`), so each keeps its first 6 and last 4
  // digits in place; a window another one's masking already hides enough of is left as it is.
  const boundary = new Uint8Array(m + 1);
  for (let g = 0; g < groups.length; g++) boundary[groups[g] as number] = 1;
  boundary[m] = 1;
  const first: number[] = [];
  const rest: number[] = [];
  for (let w = 0; w < windows.length; w += 2) {
    const aligned = boundary[windows[w] as number] === 1 && boundary[windows[w + 1] as number] === 1;
    (aligned ? first : rest).push(w);
  }
  // Along groups: by start, then shortest (`4111 1111 1111 1111 123` hides the 16-digit card's middle); one
  // starting with a zero (padding, and no card number starts with one) after the others.
  const padded = (w: number): number => (digits.charCodeAt(windows[w] as number) === 48 ? 1 : 0);
  first.sort(
    (x, y) =>
      padded(x) - padded(y) ||
      (windows[x] as number) - (windows[y] as number) ||
      (windows[x + 1] as number) - (windows[y + 1] as number),
  );
  const hidden = new Uint8Array(m);
  for (const w of first.concat(rest)) {
    const a = windows[w] as number;
    const b = windows[w + 1] as number;
    let count = 0;
    for (let k = a; k < b; k++) count += hidden[k] as number;
    if (count >= Math.min(b - a - KEEP_HEAD - KEEP_TAIL, ENOUGH_HIDDEN)) continue;
    for (let k = a + KEEP_HEAD; k < b - KEEP_TAIL; k++) hidden[k] = 1;
  }
  const chars = slice.split('');
  for (let k = 0; k < m; k++) if (hidden[k] === 1) chars[(at[k] as number) - start] = '*';
  return chars.join('');
}

/**
 * Mask every card number inside a text: every 13-19-digit window of every digit run (digits joined by
 * spaces, dashes, dots or slashes) that passes Luhn. A run that is exactly one card number becomes
 * `411111******1111`; a card number inside a longer run keeps its first 6 and last 4 digits in place
 * (`7-ELEVEN 1234 411111******1111`, `4111 11** **** 1111 123`). The result holds no Luhn-valid window.
 * @example maskCardNumbers('card 4111.1111.1111.1111 declined') // 'card 411111******1111 declined'
 */
export function maskCardNumbers(text: string): string {
  if (!hasThirteenDigits(text)) return text;
  let out = '';
  let last = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (!isDigit(text.charCodeAt(i))) continue;
    const run = readRun(text, i);
    if (run.digits.length >= MIN) {
      const masked = maskRun(text, i, run);
      if (masked !== undefined) {
        out += text.slice(last, i) + masked;
        last = run.end;
      }
    }
    i = run.end - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * True when the text holds a card number as maskCardNumbers finds them (every window).
 * @example containsCardNumber('id 5500 0055 5555 5559') // true
 */
export function containsCardNumber(text: string): boolean {
  if (!hasThirteenDigits(text)) return false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (!isDigit(text.charCodeAt(i))) continue;
    const run = readRun(text, i);
    if (run.digits.length >= MIN && cardWindows(run.digits).length > 0) return true;
    i = run.end - 1;
  }
  return false;
}

/**
 * Does an id or code value hold a card number? Candidates are whole digit groups and contiguous
 * sequences of groups joined by separators, of 13-19 digits after any leading zeros (padding:
 * `000000PAN16` holds one, a zero-padded `00000000000` + `12345` does not), passing Luhn. A window inside a group is not a
 * candidate: a 23-digit acquirer reference number is one number, not a card number with extra digits.
 * @example holdsCardNumberId('PAN16-01') // true
 * @example holdsCardNumberId('74567890123456789012345') // false
 */
export function holdsCardNumberId(text: string): boolean {
  // One pass over the groups is the pre-check too: a value with fewer than 13 digits in a row (separators
  // aside) is read once, and only a run of groups long enough is looked at closer.
  const n = text.length;
  if (n < MIN) return false;
  let i = 0;
  while (i < n) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i;
    while (end < n && isDigit(text.charCodeAt(end))) end++;
    let next = end;
    while (next < n && isSeparator(text.charCodeAt(next))) next++;
    if (next > end && next < n && isDigit(text.charCodeAt(next))) {
      // Groups joined by separators: every sequence of them is a candidate, if there are digits enough.
      let count = end - i;
      let j = next;
      for (;;) {
        while (j < n && isDigit(text.charCodeAt(j))) {
          count++;
          j++;
        }
        let k = j;
        while (k < n && isSeparator(text.charCodeAt(k))) k++;
        if (k === j || k >= n || !isDigit(text.charCodeAt(k))) break;
        j = k;
      }
      if (count >= MIN && runHoldsCardId(readRun(text, i))) return true;
      i = j;
      continue;
    }
    // One group alone (a merchant id, an ARN, a numeric id): the common case, read in place.
    let sig = i;
    while (sig < end && text.charCodeAt(sig) === 48) sig++;
    if (end - sig >= MIN && end - sig <= MAX && luhnAt(text, sig, end)) return true;
    i = end;
  }
  return false;
}

function runHoldsCardId(run: Run): boolean {
  const { digits, groups } = run;
  const m = digits.length;
  const k = groups.length;
  const boundary = (h: number): number => (h < k ? (groups[h] as number) : m);
  // Leading zeros are padding: a candidate starts at the first significant digit at or after a group's
  // start. nz[i] is the first non-zero digit at or after i, so hostile runs of zeros stay linear.
  const nz = new Int32Array(m + 1);
  nz[m] = m;
  for (let i = m - 1; i >= 0; i--) nz[i] = digits.charCodeAt(i) === 48 ? (nz[i + 1] as number) : i;
  let first = 1;
  for (let g = 0; g < k; g++) {
    const sig = nz[groups[g] as number] as number;
    if (sig >= m) break;
    while (first <= k && boundary(first) <= sig) first++;
    for (let h = Math.max(first, g + 1); h <= k; h++) {
      const b = boundary(h);
      if (b - sig < MIN) continue;
      if (b - sig > MAX) break;
      if (luhnAt(digits, sig, b)) return true;
    }
  }
  return false;
}

/** A number with its card number masked (as a string), or the number itself. */
function maskNumber(value: number): unknown {
  if (!Number.isFinite(value) || Math.abs(value) < 1e12) return value;
  const s = String(value);
  // An unsafe integer has lost digits already: mask it rather than guess which ones were a card number.
  if (Number.isInteger(value) && !Number.isSafeInteger(value) && !s.includes('e')) {
    const digits = s.replace('-', '');
    if (digits.length >= MIN && digits.length <= MAX) return maskPan(digits);
  }
  const masked = maskCardNumbers(s);
  return masked === s ? value : masked;
}

/**
 * Deep copy of a JSON-like value with every card number masked: string values and object keys by
 * maskCardNumbers, numbers holding one turned into masked strings. The one pass for records and log
 * objects; cheap when nothing holds 13 digits.
 * @example maskDeep({ note: 'pan 4111-1111-1111-1111' }) // { note: 'pan 411111******1111' }
 */
export function maskDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskCardNumbers(value);
  if (typeof value === 'number') return maskNumber(value);
  if (typeof value === 'bigint') return maskDeep(value.toString());
  if (Array.isArray(value)) return value.map(maskDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const masked = isOwnId(k, v) ? v : maskDeep(v);
      // A key `__proto__` (a CSV column, an NDJSON key) stays a key: an assignment would set the prototype.
      if (k === '__proto__')
        Object.defineProperty(out, k, {
          value: masked,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[maskCardNumbers(k)] = masked;
    }
    return out;
  }
  return value;
}

/**
 * Identifiers the service and we make, under their own keys and in their own shape, never input data: kept whole,
 * since support searches for them. The request ids are UUIDs; about 1 in 10 with an all-digit head would otherwise
 * lose digits to the rule (their 8-4-4 groups form a Luhn-valid 16-digit window). A batch id is the run id (8 hex
 * digits), its counters and its halving path (`2d000640-17.1.2`, `…-p3-12`, `…-w1-4`): a run id ending in digits
 * and a deep path can form a Luhn-valid 13-digit window too. In free text (an error message) the rule still applies.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const OWN_IDS = new Map<string, RegExp>([
  ['requestId', UUID],
  ['clientRequestId', UUID],
  ['batchId', /^[0-9a-f]{8}(?:-[pw]?\d+)+(?:\.[12])*$/],
]);
const isOwnId = (k: string, v: unknown): boolean => typeof v === 'string' && OWN_IDS.get(k)?.test(v) === true;

/**
 * At most `max` characters of a text for a message or a reject line, masked before it is cut (the cut
 * never halves a digit run, so no card number survives in part as an unrecognised shorter number).
 * @example maskExcerpt('x'.repeat(500), 200) // 'xxx…' (200 characters and an ellipsis)
 */
export function maskExcerpt(text: string, max: number): string {
  let end = Math.min(text.length, 2 * max);
  while (end < text.length) {
    const c = text.charCodeAt(end);
    if (!isDigit(c) && !isSeparator(c)) break;
    end++;
  }
  const masked = maskCardNumbers(end < text.length ? text.slice(0, end) : text);
  return masked.length > max ? `${masked.slice(0, max)}…` : masked;
}
