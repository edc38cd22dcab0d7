// What `mapping draft` reads from a sample value: a date-time layout, a zone column, a "CITY, ST ZIP" column, and the
// words exports use for the service's codes (chip, ecom, purchase …).

/** Date-time layouts seen in exports: the sample's shape → the timestamp pattern that reads it. */
const LAYOUTS: Array<[RegExp, (s: string) => string]> = [
  // 02/12/2026 18:03:58 (month first unless the first number cannot be a month)
  [
    /^(\d{1,2})\/(\d{1,2})\/\d{4} \d{1,2}:\d{2}(:\d{2})?$/,
    (s) => `${dayFirst(s, '/') ? 'D/M' : 'M/D'}/YYYY H:mm${/:\d{2}:\d{2}$/.test(s) ? ':ss' : ''}`,
  ],
  // 2/12/2026 6:03:58 PM
  [
    /^\d{1,2}\/\d{1,2}\/\d{4} \d{1,2}:\d{2}(:\d{2})? ?[AaPp][Mm]$/,
    (s) =>
      `${dayFirst(s, '/') ? 'D/M' : 'M/D'}/YYYY h:mm${/:\d{2}:\d{2}/.test(s) ? ':ss' : ''}${/ [AaPp][Mm]$/.test(s) ? ' A' : 'A'}`,
  ],
  // 12-02-2026 18:03:58, 12.02.2026 18:03:58 (day first in dotted dates, as in Europe)
  [/^\d{1,2}-\d{1,2}-\d{4} \d{1,2}:\d{2}:\d{2}$/, (s) => `${dayFirst(s, '-') ? 'D-M' : 'M-D'}-YYYY H:mm:ss`],
  [/^\d{1,2}\.\d{1,2}\.\d{4} \d{1,2}:\d{2}:\d{2}$/, () => 'D.M.YYYY H:mm:ss'],
  // 2026/02/12 18:03:58
  [/^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}$/, () => 'YYYY/MM/DD HH:mm:ss'],
  // 20260212 180358, 20260212180358
  [/^\d{8} ?\d{6}$/, (s) => (s.includes(' ') ? 'YYYYMMDD HHmmss' : 'YYYYMMDDHHmmss')],
];

function dayFirst(s: string, sep: string): boolean {
  const [a, b] = s.split(' ')[0]?.split(sep) ?? [];
  return Number(a) > 12 && Number(b) <= 12;
}

/**
 * The timestamp rule a sample suggests: 'auto' for ISO 8601 and Unix times (with `zoned` when the value carries
 * its offset), a pattern for the layouts above, undefined for anything else.
 * @example timeLayout('02/12/2026 18:03:58') // { format: 'M/D/YYYY H:mm:ss', zoned: false }
 */
export function timeLayout(sample: string): { format: string; zoned: boolean } | undefined {
  const s = sample.trim();
  if (/^\d{9,11}$/.test(s)) return { format: 'unix-s', zoned: true };
  if (/^\d{12,14}$/.test(s) && !/^\d{8} ?\d{6}$/.test(s)) return { format: 'unix-ms', zoned: true };
  // An offset of hours alone (`+02`, psql's timestamptz output) is an instant too.
  const iso =
    /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?|[A-Za-z]{3,4})?$/i.exec(
      s,
    );
  if (iso) return { format: 'auto', zoned: iso[3] !== undefined };
  for (const [re, format] of LAYOUTS) if (re.test(s)) return { format: format(s), zoned: false };
  return undefined;
}

/** Column names of a per-record time zone. */
export const ZONE_COLUMNS = ['tz', 'timezone', 'zone', 'tzname', 'timezonename', 'txntz', 'localtz'];

/** "AUSTIN, TX 78701", "SEATTLE, WA 98101-1234", "MELBOURNE, VIC 3000", "TORONTO, ON M5V 2T6". */
export const CITY_STATE_ZIP =
  '^(?<city>.+?),\\s*(?<state>[A-Za-z]{2,3})\\s+(?<zip>[A-Za-z0-9][A-Za-z0-9 -]{1,9})$';
const CITY_STATE_ZIP_RE = new RegExp(CITY_STATE_ZIP);
/** "SAN JOSE, CA": city and state, no postal code. */
export const CITY_STATE = '^(?<city>.+?),\\s*(?<state>[A-Za-z]{2,3})$';
const CITY_STATE_RE = new RegExp(CITY_STATE);

/**
 * Whether a sample reads as a combined location, and which: city, state and postal code, or city and state.
 * @example locationShape('AUSTIN, TX 78701') // 'city-state-zip'
 */
export function locationShape(sample: string): 'city-state-zip' | 'city-state' | undefined {
  const s = sample.trim();
  if (s.length > 120) return undefined;
  if (CITY_STATE_ZIP_RE.test(s) && /\d/.test(s.slice(s.lastIndexOf(' ')))) return 'city-state-zip';
  if (CITY_STATE_RE.test(s)) return 'city-state';
  return undefined;
}

/** The words exports use for the service's codes (lower case), per code field: proposed as a draft's `enum`. */
export const CODE_WORDS: Record<string, Record<string, string>> = {
  transactionType: {
    purchase: 'AUTHORIZED',
    sale: 'AUTHORIZED',
    authorized: 'AUTHORIZED',
    capture: 'AUTHORIZED',
    refund: 'REFUND',
    return: 'REFUND',
  },
  paymentType: {
    debit: 'DEBIT',
    d: 'DEBIT',
    credit: 'CREDIT',
    c: 'CREDIT',
    prepaid: 'PREPAID',
    p: 'PREPAID',
  },
  paymentMethodEntryType: {
    chip: 'CHIP',
    emv: 'CHIP',
    icc: 'CHIP',
    contactless: 'CONTACTLESS',
    tap: 'CONTACTLESS',
    ctls: 'CONTACTLESS',
    nfc: 'CONTACTLESS',
    swipe: 'MAGNETIC_STRIPE',
    magstripe: 'MAGNETIC_STRIPE',
    magnetic_stripe: 'MAGNETIC_STRIPE',
    ecom: 'ECOMMERCE',
    ecommerce: 'ECOMMERCE',
    online: 'ECOMMERCE',
    web: 'ECOMMERCE',
    manual: 'MANUAL',
    keyed: 'MANUAL',
    cof: 'CREDENTIAL_ON_FILE',
    card_on_file: 'CREDENTIAL_ON_FILE',
    apple_pay: 'APPLE_PAY',
    applepay: 'APPLE_PAY',
    google_pay: 'GOOGLE_PAY',
    googlepay: 'GOOGLE_PAY',
    samsung_pay: 'SAMSUNG_PAY',
  },
  onlineIndicator: { y: 'ONLINE', yes: 'ONLINE', online: 'ONLINE', n: 'NOT_ONLINE', no: 'NOT_ONLINE' },
};
