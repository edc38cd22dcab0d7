// `backfill plan`: check every input (readable, known format, CSV header has the profile's columns), then cut each
// into partitions at record boundaries and record them in the PostgreSQL ledger, once per file.
import { createHash } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { builtinBytes } from '../config/builtin.ts';
import { FILE_CAPS } from '../config/small-file.ts';
import { SvcIngestError } from '../errors.ts';
import { changedInput, recordPlan } from '../ledger/postgres/backfill/partitions.ts';
import { planDestination, plannedElsewhere } from '../ledger/postgres/destinations.ts';
import { connectLedgerDb } from '../ledger/postgres/session.ts';
import type { PgLedgerRef } from '../ledger/ref.ts';
import type { Logger } from '../log.ts';
import { checkRequiredColumns } from '../map/columns.ts';
import { loadProfile, MAPPINGS, MAPPINGS_DIR } from '../map/profile.ts';
import { containsCardNumber, maskCardNumbers } from '../mask/index.ts';
import type { InputFormat } from '../model/input.ts';
import { DEFAULT_MAX_LINE_BYTES, readCsvHeader, readOnce, resolveInputs } from '../read/open.ts';
import { cutFile } from './cut.ts';
import { DEFAULT_PARTITION_BYTES } from './partition-size.ts';

export interface PlanOptions {
  /** The shared ledger, with its connection settings. */
  ledger: PgLedgerRef;
  files: string[];
  mapping?: string;
  format?: InputFormat;
  delimiter?: string;
  partitionBytes?: number;
  maxLineBytes?: number;
  logger: Logger;
  /** Where the backfill sends (recorded with each input; workers sending elsewhere refuse to claim). */
  destination?: string;
  /** The destination may be new to this ledger (--new-destination). */
  newDestination?: boolean;
}

/**
 * One file of the plan.
 * @example { path: '/data/2019.csv', size: 1073741824, format: 'csv', gzip: false, partitions: 16, created: true }
 */
export interface PlannedFile {
  path: string;
  size: number;
  format: InputFormat;
  gzip: boolean;
  partitions: number;
  /** false: planned before (same size and mtime); nothing changed. */
  created: boolean;
}

export interface PlanResult {
  ledger: string;
  mapping: string;
  files: PlannedFile[];
}

/**
 * The profile as every worker must find it: a shipped name, or an absolute path; and its content's digest (a worker
 * compares it with the planned one before reading a partition).
 * @example await mappingOf('northwind-csv') // { mapping: 'northwind-csv', sha256: '3f…' }
 */
export async function mappingOf(mapping: string | undefined): Promise<{ mapping?: string; sha256?: string }> {
  if (mapping === undefined || mapping === 'canonical') return {};
  const isPath = /[\\/]/.test(mapping) || mapping.endsWith('.json');
  const file = isPath ? path.resolve(mapping) : path.join(MAPPINGS_DIR, `${mapping}.json`);
  const bytes = isPath
    ? await readFile(file)
    : builtinBytes(`${MAPPINGS}/${mapping}.json`, FILE_CAPS.profile);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { mapping: isPath ? file : mapping, sha256 };
}

/**
 * Plan a backfill: everything is checked before anything is written; files already planned are not read again.
 * @example await planBackfill({ ledger: ref, files: ['/data/2019.csv'], logger })
 */
export async function planBackfill(o: PlanOptions): Promise<PlanResult> {
  if (o.files.length === 0 || o.files.includes('-')) {
    throw new SvcIngestError(
      'USAGE_INVALID',
      'backfill plan needs input files that every worker can read at the same path (standard input cannot be shared)',
    );
  }
  const profile = await loadProfile(o.mapping);
  const delimiter = o.delimiter ?? profile.delimiter ?? ',';
  const maxLineBytes = o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const partitionBytes = o.partitionBytes ?? DEFAULT_PARTITION_BYTES;
  const specs = [];
  for (const spec of await resolveInputs(o.files, { format: o.format })) {
    if (readOnce(spec)) {
      throw new SvcIngestError(
        'USAGE_INVALID',
        `${spec.path === '-' ? 'standard input' : spec.path} is a stream: a backfill plans files that every worker can read by byte range`,
        { source: spec.path },
      );
    }
    const abs = await realpath(spec.path);
    // Every worker opens the file by the path stored in the ledger database: a path holding a card number would be
    // stored whole there, so it is refused (renaming the file is the way on).
    if (containsCardNumber(abs))
      throw new SvcIngestError(
        'USAGE_INVALID',
        `${maskCardNumbers(abs)}: the path holds a card number, and a backfill stores its inputs' paths; rename the file`,
        { source: maskCardNumbers(abs) },
      );
    const columns = spec.format === 'csv' ? await readCsvHeader(spec, { delimiter }) : undefined;
    if (columns) checkRequiredColumns(profile, columns, spec.path);
    // The header is stored too (workers read the later partitions by it): a column named with a card number is refused.
    const carded = columns?.findIndex((c) => containsCardNumber(c)) ?? -1;
    if (carded >= 0)
      throw new SvcIngestError(
        'USAGE_INVALID',
        `${maskCardNumbers(abs)}: header column ${carded + 1} (${JSON.stringify(maskCardNumbers(columns?.[carded] ?? ''))}) ` +
          "holds a card number, and a backfill stores its inputs' headers; fix the header",
        { source: maskCardNumbers(abs) },
      );
    specs.push({ spec: { ...spec, path: abs }, columns });
  }
  const mapping = await mappingOf(o.mapping);
  const { db } = await connectLedgerDb(o.ledger, { logger: o.logger, write: true });
  try {
    const destinationNo = await planDestination(db, o);
    const files: PlannedFile[] = [];
    for (const { spec, columns } of specs) {
      const known = await db.query<{ size: string; mtime_ms: string; n: number; destination_no: number }>(
        'other',
        `SELECT i.size, i.mtime_ms, i.destination_no,
                (SELECT count(*)::int FROM svc_ingest.partitions p WHERE p.input_no = i.input_no) AS n
         FROM svc_ingest.inputs i WHERE i.path = $1`,
        [spec.path],
      );
      // A file planned before (same size and mtime) is not read again; a changed one is refused.
      const st = await stat(spec.path);
      const now = { size: st.size, mtimeMs: Math.floor(st.mtimeMs) };
      const old = known.rows[0];
      if (old && old.destination_no !== destinationNo)
        throw await plannedElsewhere(db, spec.path, o.destination);
      const was = old && { size: Number(old.size), mtimeMs: Number(old.mtime_ms) };
      if (was && (was.size !== now.size || was.mtimeMs !== now.mtimeMs))
        throw changedInput(spec.path, was, now);
      let rec: { created: boolean; partitions: number };
      if (old) rec = { created: false, partitions: old.n };
      else {
        const cuts = await cutFile(spec, { delimiter, maxLineBytes, partitionBytes });
        rec = await recordPlan(
          db,
          {
            path: spec.path,
            size: cuts.size,
            mtimeMs: cuts.mtimeMs,
            format: spec.format,
            gzip: spec.gzip,
            delimiter,
            recordDelimiter: cuts.recordDelimiter,
            columns,
            mapping: mapping.mapping,
            mappingSha256: mapping.sha256,
            partitionBytes,
            partitions: cuts.partitions,
            destinationNo,
          },
          `${hostname()}:${process.pid}`,
        );
      }
      o.logger.info(
        { event: 'backfill.planned', source: spec.path, partitions: rec.partitions, created: rec.created },
        rec.created ? 'input planned' : 'input already planned',
      );
      files.push({
        path: spec.path,
        size: now.size,
        format: spec.format,
        gzip: spec.gzip,
        partitions: rec.partitions,
        created: rec.created,
      });
    }
    return { ledger: db.location, mapping: mapping.mapping ?? 'canonical', files };
  } catch (err) {
    throw db.fail('LEDGER_WRITE', 'cannot record the plan in', err);
  } finally {
    await db.close();
  }
}
