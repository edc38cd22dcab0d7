// A dispatcher's settings for a test run: the test's own values, over the file's quick ones (short waits, few
// retries), over the settings table's defaults; and the dispatcher's other options, apart.
import { defaultConfig } from '../../src/config/index.ts';
import type { DispatchConfig, DispatcherOptions } from '../../src/send/dispatcher.ts';

/** What a test may give: any setting, and any other option of the dispatcher. */
export type DispatchTestOptions = Partial<DispatchConfig & Omit<DispatcherOptions, 'settings'>>;

const SEND = defaultConfig().send;

/**
 * The settings and the other options of `opts`.
 * @example const { settings, rest } = dispatchSettings(opts, { concurrency: 4, maxRetries: 5, retryBaseMs: 1, retryMaxMs: 20 })
 */
export function dispatchSettings(
  opts: DispatchTestOptions,
  quick: Pick<DispatchConfig, 'concurrency' | 'maxRetries' | 'retryBaseMs' | 'retryMaxMs'>,
): { settings: DispatchConfig; rest: Partial<Omit<DispatcherOptions, 'settings'>> } {
  const {
    concurrency = quick.concurrency,
    maxRetries = quick.maxRetries,
    retryBaseMs = quick.retryBaseMs,
    retryMaxMs = quick.retryMaxMs,
    splitRetries = SEND.splitRetries,
    outageMaxMs = SEND.outageMaxMs,
    ...rest
  } = opts;
  return { settings: { concurrency, maxRetries, retryBaseMs, retryMaxMs, splitRetries, outageMaxMs }, rest };
}
