// The default partition size on its own, so the CLI can name it in --help without loading the cutter and the readers.

/** Default partition size: about 200k canonical records, half a minute of one worker at concurrency 8. */
export const DEFAULT_PARTITION_BYTES = 64 * 1024 * 1024;
