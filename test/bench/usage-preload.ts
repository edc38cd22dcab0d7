// Preloaded into a measured Node child (`node --import`): at exit, writes its resource usage to $BENCH_USAGE_FILE.
// CPU time and max RSS are process-wide (getrusage), so worker threads are counted too.
// With BENCH_MEMORY_EVERY_MS set, it also samples process.memoryUsage() (rss, heap, external, array buffers) that
// often and writes the samples beside the totals: what the memory is made of while a run goes on.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const out = process.env.BENCH_USAGE_FILE;
if (out && isMainThread) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const every = Number(process.env.BENCH_MEMORY_EVERY_MS);
  const samples: number[][] = [];
  if (every > 0) {
    const mb = (x: number) => Math.round(x / 1e5) / 10;
    setInterval(() => {
      const m = process.memoryUsage();
      samples.push([
        Math.round(performance.now()),
        mb(m.rss),
        mb(m.heapTotal),
        mb(m.heapUsed),
        mb(m.external),
        mb(m.arrayBuffers),
      ]);
    }, every).unref();
  }
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
        ...(samples.length > 0
          ? {
              memory: {
                columns: ['ms', 'rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'],
                samples,
              },
            }
          : {}),
      }),
    );
  });
}
