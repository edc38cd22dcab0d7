// Digits wrapped in bidirectional controls, judged in the order a viewer shows them too (src/mask/rule.ts): a
// right-to-left override (RLO … PDF) shows its characters reversed, so `‮6841 2636 7875 9354‬` is displayed as a
// card number; a right-to-left embedding or isolate (RLE, RLI … PDF, PDI) keeps each digit group's order but shows
// the groups from right to left. A span ends at its closing control, a line break, or the end of the text.
// (LRO, LRE, LRI show their characters in the order written, which the rule judges already.)

const RLO = 0x202e;
const RTL_OPEN = new Set([0x202b, 0x2067]); // RLE, RLI
const CLOSE = new Set([0x202c, 0x2069, 10, 13, 0x2028, 0x2029]); // PDF, PDI, line breaks

/** The spans [from, to, override?] a right-to-left control opens (the control itself left out). */
function spans(text: string): Array<[number, number, boolean]> {
  const out: Array<[number, number, boolean]> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== RLO && !RTL_OPEN.has(c)) continue;
    let j = i + 1;
    while (j < text.length && !CLOSE.has(text.charCodeAt(j))) j++;
    out.push([i + 1, j, c === RLO]);
    i = j;
  }
  return out;
}

/** A span as displayed: reversed (an override), or its digit groups in reverse order. */
function displayed(span: string, override: boolean): string {
  // Controls nested in the span are left out too: the display order holds none, so it is judged once.
  const part = span.replace(/[\u202b\u202e\u2067]/g, '');
  if (override) return [...part].reverse().join('');
  return (part.match(/[0-9]+|[^0-9]+/g) ?? []).reverse().join('');
}

/**
 * The text as a viewer shows it, each right-to-left span in display order and its opening control left out (so
 * the result holds none); the text itself when it has none.
 */
export function displayOrder(text: string): string {
  let out = '';
  let last = 0;
  for (const [a, b, override] of spans(text)) {
    out += text.slice(last, a - 1) + displayed(text.slice(a, b), override);
    last = b;
  }
  return out + text.slice(last);
}

/** The text with every digit inside a right-to-left span hidden (`*`). */
export function hideRtlDigits(text: string): string {
  let out = '';
  let last = 0;
  for (const [a, b] of spans(text)) {
    out += text.slice(last, a) + text.slice(a, b).replace(/\p{Nd}/gu, '*');
    last = b;
  }
  return out + text.slice(last);
}
