// The ledger store made ready before a run reads anything (the file store loads its resume index then), with a
// signal meanwhile answered as a stop rather than an error.
import type { LedgerStore } from './store.ts';

/**
 * Makes the store ready for the first record (the file store loads its resume index: admit([])). A signal
 * meanwhile: the signal's name (nothing is read, nothing is sent); else null.
 */
export async function readyStore(
  store: LedgerStore,
  stopRequested: () => string | null,
): Promise<string | null> {
  try {
    await store.admit([]);
    return null;
  } catch (err) {
    const stop = stopRequested();
    if (stop) return stop;
    throw err;
  }
}
