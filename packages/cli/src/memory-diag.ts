// KBCHAT_MEMORY_DIAG=1: on SIGUSR2 the process prints one line, `[memory] {json}`,
// with what only the process itself can see of its memory: the main thread's V8
// heap (per space), the ArrayBuffers and external memory V8 knows of (PGlite's
// WASM memory included when its module runs on the main thread), and the same
// of each worker thread that answers on the `kbchat:memory-diag` channel (the
// gateway's store thread, the embedding workers: Node 20 cannot read another
// isolate's heap). Off by default and reachable only by whoever may signal the
// process (its own user, root): nothing of it is served over HTTP.
// packages/platform/bench/memory-bench.mjs reads it.
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { BroadcastChannel } from 'node:worker_threads';

const MB = 1024 * 1024;
const mb = (n: number): number => Math.round((n / MB) * 10) / 10;

/** The line printed on SIGUSR2 (exported for its test). */
export function memoryReport(): Record<string, unknown> {
  const usage = process.memoryUsage();
  const heap = getHeapStatistics();
  const spaces: Record<string, number> = {};
  for (const s of getHeapSpaceStatistics()) spaces[s.space_name] = mb(s.space_used_size);
  return {
    rssMB: mb(usage.rss),
    mainHeapTotalMB: mb(usage.heapTotal),
    mainHeapUsedMB: mb(usage.heapUsed),
    mainExternalMB: mb(usage.external),
    mainArrayBuffersMB: mb(usage.arrayBuffers),
    mainHeapLimitMB: mb(heap.heap_size_limit),
    mainMallocedMB: mb(heap.malloced_memory),
    mainSpacesUsedMB: spaces,
  };
}

interface ThreadUsage extends NodeJS.MemoryUsage {
  thread: string;
}

/** The worker threads' own reports (each thread's V8 heap), collected for `waitMs`. */
export async function threadReports(waitMs = 300): Promise<Record<string, unknown>[]> {
  const channel = new BroadcastChannel('kbchat:memory-diag');
  const got: Record<string, unknown>[] = [];
  channel.onmessage = (event) => {
    const u = (event as { data: ThreadUsage }).data;
    got.push({ thread: u.thread, heapTotalMB: mb(u.heapTotal), heapUsedMB: mb(u.heapUsed), externalMB: mb(u.external), arrayBuffersMB: mb(u.arrayBuffers) });
  };
  channel.postMessage('report');
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  channel.close();
  return got;
}

/** Installs the SIGUSR2 report when env.KBCHAT_MEMORY_DIAG is "1"; returns whether it did. */
export function installMemoryDiag(env: Record<string, string | undefined>): boolean {
  if (env.KBCHAT_MEMORY_DIAG !== '1') return false;
  process.on('SIGUSR2', () => {
    void threadReports().then((threads) => console.log(`[memory] ${JSON.stringify({ ...memoryReport(), threads })}`));
  });
  return true;
}
