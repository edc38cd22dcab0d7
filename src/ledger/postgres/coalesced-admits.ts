// Admits coalesced into one statement: while one claim statement is under way, the groups that arrive wait, and
// the next statement claims all of their ids at once (ADMIT_SQL takes any number of ids, and decides each id on
// its own: claimed, acked, or held elsewhere). Each caller gets the answer for its own ids, as if it were alone.
import type { BatchItem } from '../../batch/batcher.ts';

/** Ids per statement at most: the groups waiting beyond it go in the statement after. */
export const MAX_ADMIT_IDS = 2000;

interface Waiting {
  ids: string[];
  resolve: (skip: Map<string, boolean>) => void;
  reject: (err: unknown) => void;
}

export class CoalescedAdmits {
  private waiting: Waiting[] = [];
  private running = false;
  /** Statements run, and the groups they held (for the figures). */
  readonly stats = { statements: 0, groups: 0 };

  private readonly claim: (ids: string[]) => Promise<Map<string, boolean>>;

  /** `claim(ids)` answers with the ids skipped (true: acked earlier; false: claimed by another live worker). */
  constructor(claim: (ids: string[]) => Promise<Map<string, boolean>>) {
    this.claim = claim;
  }

  /** The skipped ids of `items` (the rest are now claimed by this worker). */
  admit(items: readonly BatchItem[]): Promise<Map<string, boolean>> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ ids: items.map((i) => i.id), resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiting.length > 0) {
      const group: Waiting[] = [];
      const ids: string[] = [];
      while (this.waiting.length > 0) {
        const next = this.waiting[0] as Waiting;
        if (group.length > 0 && ids.length + next.ids.length > MAX_ADMIT_IDS) break;
        this.waiting.shift();
        group.push(next);
        for (const id of next.ids) ids.push(id);
      }
      this.stats.statements++;
      this.stats.groups += group.length;
      try {
        const skip = await this.claim(ids);
        for (const w of group) {
          const own = new Map<string, boolean>();
          for (const id of w.ids) {
            const acked = skip.get(id);
            if (acked !== undefined) own.set(id, acked);
          }
          w.resolve(own);
        }
      } catch (err) {
        for (const w of group) w.reject(err);
      }
    }
    this.running = false;
  }
}
