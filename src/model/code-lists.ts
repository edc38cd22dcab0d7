// The service's code fields and the values we know for each, with where each value comes from. The interface
// shows one observed value per field and calls the complete lists "not shown"; the rest are our choices, made
// from what processors' exports distinguish (docs/mapping.md "Code lists" says so value by value).

/** Where a value comes from: seen in the service's interface, or chosen by us. */
export type CodeOrigin = 'observed' | 'ours';

/** The code fields whose values come from a list (the validator checks only their shape). */
export const CODE_FIELDS = [
  'transactionType',
  'paymentType',
  'paymentMethodEntryType',
  'paymentNetworkMerchantIdType',
  'onlineIndicator',
  'cardPresentIndicator',
] as const;
export type CodeField = (typeof CODE_FIELDS)[number];

/**
 * Every known value of each code field, with its origin.
 * @example CODE_LISTS.paymentType.DEBIT // 'observed'
 */
export const CODE_LISTS: Readonly<Record<CodeField, Readonly<Record<string, CodeOrigin>>>> = {
  transactionType: { AUTHORIZED: 'observed', REFUND: 'ours' },
  paymentType: { DEBIT: 'observed', CREDIT: 'ours', PREPAID: 'ours' },
  paymentMethodEntryType: {
    APPLE_PAY: 'observed',
    GOOGLE_PAY: 'ours',
    SAMSUNG_PAY: 'ours',
    CHIP: 'ours',
    CONTACTLESS: 'ours',
    MAGNETIC_STRIPE: 'ours',
    MANUAL: 'ours',
    ECOMMERCE: 'ours',
    CREDENTIAL_ON_FILE: 'ours',
    CARD: 'ours',
    OTHER: 'ours',
  },
  paymentNetworkMerchantIdType: { MID: 'observed' },
  onlineIndicator: { NOT_ONLINE: 'observed', ONLINE: 'ours' },
  cardPresentIndicator: { '1': 'ours', '0': 'ours' },
};

const KNOWN: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  CODE_FIELDS.map((f) => [f, new Set(Object.keys(CODE_LISTS[f]))]),
);

/** Whether a field is a code field (CODE_FIELDS). */
export function isCodeField(field: string): field is CodeField {
  return KNOWN.has(field);
}

/**
 * The problem of a code field's value outside its list, or undefined (a known value, or not a code field).
 * @example codeProblem('paymentMethodEntryType', 'ECOM') // 'not a known paymentMethodEntryType (known: APPLE_PAY, …)'
 */
export function codeProblem(field: string, value: unknown): string | undefined {
  const known = KNOWN.get(field);
  if (known === undefined || (typeof value === 'string' && known.has(value))) return undefined;
  return `${JSON.stringify(value)} is not a known ${field} (known: ${[...known].join(', ')})`;
}

/**
 * Countries whose merchants' addresses carry a state, province or territory as a 2-3 letter code that card
 * networks deliver: the United States, Canada and Australia. Our choice (docs/mapping.md "Merchants abroad"):
 * Mexico, Brazil or India have states too, but their codes are not reliably in a network's merchant record; a
 * profile names its own list for them (`"required": {"countries": [...]}`).
 */
export const STATE_COUNTRIES: readonly string[] = ['US', 'CA', 'AU'];

/** Separates the code values in a codeKey (a control character no value may hold). */
const SEP = '\u001f';

/**
 * The code values of a transaction as one string (CODE_FIELDS order, an absent one empty): what a record carries
 * from where it was prepared (maybe another thread) to where it is counted, for the price of one concatenation.
 * @example codeKey({ transactionType: 'AUTHORIZED', paymentType: 'DEBIT' }) // 'AUTHORIZED\u001fDEBIT\u001f\u001f\u001f\u001f'
 */
export function codeKey(tx: Record<string, unknown>): string {
  // The same few combinations over and over: each is looked up value by value in a tree of maps and handed out as
  // the one flat string made for it the first time. A fresh concatenation a record (eleven parts) was flattened
  // and hashed again by the tally's Map (~1 µs a record, profiled) and, held until the batch's answer, promoted.
  let node: KeyNode = keyTree;
  for (let i = 0; i < CODE_FIELDS.length; i++) {
    const v = tx[CODE_FIELDS[i] as CodeField];
    const s = typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
    let next = node.get(s);
    if (next === undefined) {
      if (keyNodes >= MAX_KEY_NODES) return joinedKey(tx);
      next = i === CODE_FIELDS.length - 1 ? joinedKey(tx) : new Map();
      node.set(s, next);
      keyNodes++;
    }
    if (typeof next === 'string') return next;
    node = next;
  }
  return joinedKey(tx);
}

/** The codeKey tree: per code field in order, a value's subtree, and at the last field the key itself. */
type KeyNode = Map<string, KeyNode | string>;
const keyTree: KeyNode = new Map();
let keyNodes = 0;
/** Entries of the tree at most (a hostile export's many combinations are joined a record, as before). */
const MAX_KEY_NODES = 4096;

function joinedKey(tx: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const f of CODE_FIELDS) parts.push(String(tx[f] ?? ''));
  return parts.join(SEP);
}

/** Per code field, each distinct value with how many records carried it (absent values left out). */
export type CodeCounts = Partial<Record<CodeField, Record<string, number>>>;

/** Most distinct code combinations counted one by one; more (a hostile export) are counted under "(other)". */
const MAX_KEYS = 10_000;

/**
 * Counts records by their codeKey (one Map update a record: combinations are few), split per field on demand.
 * @example const t = createCodeTally(); t.add(codeKey(tx)); t.counts() // { transactionType: { AUTHORIZED: 1 }, … }
 */
export interface CodeTally {
  add(key: string | undefined, n?: number): void;
  counts(): CodeCounts;
}

export function createCodeTally(): CodeTally {
  const byKey = new Map<string, number>();
  return {
    add(key, n = 1) {
      if (key === undefined) return;
      const had = byKey.get(key);
      if (had !== undefined) byKey.set(key, had + n);
      else if (byKey.size < MAX_KEYS) byKey.set(key, n);
      else byKey.set('(other)', (byKey.get('(other)') ?? 0) + n);
    },
    counts() {
      const out: CodeCounts = {};
      for (const [key, n] of byKey) {
        if (key === '(other)') continue;
        const values = key.split(SEP);
        for (let i = 0; i < CODE_FIELDS.length; i++) {
          const v = values[i];
          if (v === undefined || v === '') continue;
          const field = CODE_FIELDS[i] as CodeField;
          let per = out[field];
          if (per === undefined) {
            per = Object.create(null) as Record<string, number>;
            out[field] = per;
          }
          per[v] = (per[v] ?? 0) + n;
        }
      }
      return out;
    },
  };
}
