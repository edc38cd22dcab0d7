// Preloaded into a measured Node child (`node --import`): at exit, writes its resource usage to $BENCH_USAGE_FILE.
// CPU time and max RSS are process-wide (getrusage), so worker threads are counted too.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const out = process.env.BENCH_USAGE_FILE;
if (out && isMainThread) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(
      out,
      JSON.stringify({
        wallMs: performance.now(),
        userMs: u.userCPUTime / 1000,
        systemMs: u.systemCPUTime / 1000,
        maxRssKb: u.maxRSS,
        loopP99Ms: delay.percentile(99) / 1e6,
        loopMaxMs: delay.max / 1e6,
      }),
    );
  });
}
