// Rejected records: each goes to the rejects file (rejects.ts) and the counters; the reject caps say when the
// input is plainly not what the profile expects (a cap on lines or bytes, or nearly all of the first records
// rejected), and the chain then stops reading.
import type { Config } from '../config/index.ts';
import type { FieldError } from '../model/field-error.ts';
import type { Counters } from './counters.ts';
import type { RejectsWriter } from './rejects.ts';

/**
 * The reject caps, the table's (send.maxRejects, send.maxRejectBytes: 0 = no limit; stop when at least
 * send.maxRejectPercent of the first send.rejectSample records are rejected, 0 = off).
 */
export type RejectCaps = Pick<
  Config['send'],
  'maxRejects' | 'maxRejectBytes' | 'maxRejectPercent' | 'rejectSample'
>;

export interface Rejecter {
  /** `expanded`: a notification `expand` made beyond its record's first (counted in `expanded`, not `read`). */
  reject(source: string, line: number, errors: FieldError[], record: unknown, expanded?: boolean): void;
  /**
   * Checked before the next record is counted: true once a cap is reached (the run stops reading). The ratio
   * is looked at once, when `read` reaches the sample.
   */
  stopBefore(read: number): boolean;
  /** Why the run stopped reading (a cap), or null. */
  readonly tooMany: string | null;
}

export function createRejecter(
  writer: RejectsWriter,
  c: Counters,
  runId: string,
  caps: RejectCaps,
): Rejecter {
  const { rejectSample: sample, maxRejectPercent: percent } = caps;
  let tooMany: string | null = null;
  return {
    reject(source, line, errors, record, expanded) {
      const wrote = writer.write({ source, line, errors, record, runId });
      if (wrote === 'dropped') {
        // Past a cap the line cannot be written: the run stops before this record, which stays unread (a rerun
        // reads it), so every reject counted is a line in the rejects file.
        if (expanded === true) c.expanded--;
        else c.read--;
      } else {
        c.rejected++;
        if (wrote === 'known') c.rejectedKnown++;
      }
      if (writer.full && !tooMany) {
        tooMany =
          writer.full === 'lines'
            ? `more than ${caps.maxRejects} rejects in this run (--max-rejects)`
            : `the rejects would add more than ${caps.maxRejectBytes} bytes to the rejects file in this run (--max-reject-bytes)`;
      }
    },
    stopBefore(read) {
      if (tooMany) return true;
      if (read !== sample) return false;
      if (percent > 0 && c.rejected * 100 >= percent * sample) {
        tooMany = `${c.rejected} of the first ${sample} records were rejected (limit ${percent}%, --max-reject-percent)`;
      }
      return tooMany !== null;
    },
    get tooMany() {
      return tooMany;
    },
  };
}
