// A partition's view of the worker's rejects file: the rejects an earlier holder of the partition wrote (up to the
// line it recorded in the ledger) are not written again — a partition taken over, or read again, writes each reject
// once — and the last line of the partition whose reject is in this worker's file, for the ledger.
import type { RejectsWriter } from '../record/rejects.ts';

export interface PartitionRejects {
  /** What the partition's chain writes its rejects through. */
  readonly writer: RejectsWriter;
  /** The last line of the partition whose reject is in a rejects file (this worker's, or an earlier holder's). */
  through(): number;
}

/**
 * Wrap the worker's rejects writer for one partition of `source`: rejects of lines up to `writtenBefore` (an earlier
 * holder's, recorded with the partition) are counted but not appended.
 * @example const r = partitionRejects(rejects, p.path, p.rejectsThrough); runChain({ rejects: r.writer, … }); reportProgress(…, r.through())
 */
export function partitionRejects(w: RejectsWriter, source: string, writtenBefore: number): PartitionRejects {
  let through = writtenBefore;
  // Lines appended and not yet known to be in the file: [the writer's count once appended, the line].
  const queued: Array<[number, number]> = [];
  const settle = () => {
    const flushed = w.flushed ?? Number.POSITIVE_INFINITY;
    while (queued.length > 0 && (queued[0] as [number, number])[0] <= flushed) {
      through = Math.max(through, (queued.shift() as [number, number])[1]);
    }
  };
  const writer: RejectsWriter = {
    write(line) {
      if (line.source === source && line.line <= writtenBefore) return 'known';
      const r = w.write(line);
      if (line.source === source) {
        if (r === 'known') through = Math.max(through, line.line);
        else if (r === 'written') queued.push([w.written, line.line]);
      }
      return r;
    },
    get written() {
      return w.written;
    },
    get bytes() {
      return w.bytes;
    },
    get full() {
      return w.full;
    },
    get flushed() {
      return w.flushed;
    },
    // The worker's file outlives the partition: the worker closes it.
    close: async () => {},
  };
  return {
    writer,
    through() {
      settle();
      return through;
    },
  };
}
