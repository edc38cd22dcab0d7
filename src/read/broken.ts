// An input that broke under the reader: it ended mid-record, or its compressed bytes are cut or corrupt. The run
// that reads it does not stop blind: send's chain (src/chain/drive.ts, with `accountBrokenInput`) records what was
// read and not sent as failed, prints its summary and exits 1 with this error in it.
import { SvcIngestError } from '../errors.ts';

/** The reject message of a stream's last record when the stream stops inside it. */
export const ENDED_MID_RECORD = 'input ended mid-record';

/**
 * An error whose context says the input broke part-way (`brokenInput`): the chain accounts for the run and
 * reports it, rather than leaving it with no summary. The flag is a plain context field, so it crosses a worker
 * thread (prepare/pool-worker.ts copies the context).
 * @example throw brokenInput('INPUT_TRUNCATED', 'stdin: input ended mid-record at line 9', { source: 'stdin', line: 9 })
 */
export function brokenInput(
  code: 'INPUT_TRUNCATED' | 'INPUT_PARSE',
  message: string,
  /** Where it broke; `brief`: the few words the ledger's "not sent" lines carry. */
  where: { source: string; line?: number; byte?: number; brief: string },
  cause?: unknown,
): SvcIngestError {
  return new SvcIngestError(
    code,
    message,
    { ...where, brokenInput: true },
    cause === undefined ? undefined : { cause },
  );
}

/** Whether an error is an input that broke part-way (brokenInput). */
export function isBrokenInput(err: unknown): err is SvcIngestError {
  return err instanceof SvcIngestError && err.context.brokenInput === true;
}

/**
 * The error ending a stream whose last record is not terminated: no line break after it, an unclosed quote, a
 * partial JSON line. What it means and what to do is in the message: the producer stopped early, or it omits the
 * final line break (--allow-unterminated).
 * @example endedMidRecord('stdin', 20001, 'no line break after it') // INPUT_TRUNCATED
 */
export function endedMidRecord(source: string, line: number, why: string): SvcIngestError {
  return brokenInput(
    'INPUT_TRUNCATED',
    `${source}: ${ENDED_MID_RECORD} at line ${line} (${why}): the producer stopped early, that record is not ` +
      'sent; check the producer (its status in PIPESTATUS under `set -o pipefail`) and rerun. A producer ' +
      'known to omit the final line break: --allow-unterminated',
    { source, line, brief: `${source}: ${ENDED_MID_RECORD} at line ${line}` },
  );
}
