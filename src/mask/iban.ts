// IBANs in a text (src/mask/rule.ts): a valid IBAN (ISO 13616: its country's length and BBAN format, mod-97 check
// digits, through npm `ibantools`), printed in groups of four or electronic, is an account number, not a card number —
// even where four of its groups would read as one (`DE89 3704 0044 0532 0130 00`). The rule judges the text
// around it only.
import { electronicFormatIBAN, ValidationErrorsIBAN, validateIBAN } from 'ibantools';

/** An IBAN's shape: country, check digits, then groups of four (the last shorter) or up to 30 characters. */
const CANDIDATE =
  /(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?:(?: [A-Z0-9]{4}){2,8}(?: [A-Z0-9]{1,3})?|[A-Z0-9]{11,30})(?![A-Za-z0-9])/g;
/** The cheap pre-check: two capitals then two digits. */
const MAY_HOLD = /[A-Z]{2}[0-9]{2}/;

/**
 * Valid by ISO 13616: a known country, its BBAN length and format, mod-97 check digits. A national account check
 * digit (France's RIB key, Poland's, Portugal's …), which ibantools also checks, is the bank's, not the IBAN's.
 */
function iso13616(electronic: string): boolean {
  const { errorCodes } = validateIBAN(electronic, { allowQRIBAN: true });
  return errorCodes.every((e) => e === ValidationErrorsIBAN.WrongAccountBankBranchChecksum);
}

/** The valid IBAN at the start of `s`, its last printed groups dropped until one is (0: none). */
function validLength(s: string): number {
  let end = s.length;
  while (end >= 15) {
    const v = s.slice(0, end);
    if (iso13616(electronicFormatIBAN(v) ?? '')) return end;
    const cut = v.lastIndexOf(' ');
    if (cut < 0) return 0;
    end = cut;
  }
  return 0;
}

/** The valid IBANs of a text, as [start, end) pairs (none: empty). */
export function ibanSpans(text: string): number[] {
  if (text.length < 15 || !MAY_HOLD.test(text)) return [];
  const out: number[] = [];
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m !== null; m = CANDIDATE.exec(text)) {
    const n = validLength(m[0]);
    if (n > 0) out.push(m.index, m.index + n);
  }
  return out;
}
