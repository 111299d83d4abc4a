// KBCHAT_MEMORY_DIAG=1: `kbchat start` answers SIGUSR2 with one `[memory]`
// line (its main thread's V8 heap and each worker thread's own), and serves
// nothing of it over HTTP; memory-bench.mjs reads that line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, plainEnv, sleep, startKbchat, stop, type Started } from './helpers.js';

let running: Started | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  if (running) await stop(running.child);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  running = dataDir = undefined;
});

async function memoryLine(started: Started): Promise<Record<string, unknown>> {
  const before = [...started.out().matchAll(/\[memory\] /g)].length;
  started.child.kill('SIGUSR2');
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const lines = [...started.out().matchAll(/\[memory\] (\{.*\})/g)];
    if (lines.length > before) return JSON.parse(lines.at(-1)![1]!) as Record<string, unknown>;
  }
  throw new Error(`no [memory] line:\n${started.out()}`);
}

describe('kbchat start with KBCHAT_MEMORY_DIAG=1', () => {
  it('prints the main thread and the worker threads on SIGUSR2', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'kbchat-memory-diag-'));
    const [gatewayPort, platformPort] = await freePorts();
    running = await startKbchat(
      ['start', '--data-dir', dataDir, '--gateway-port', String(gatewayPort), '--port', String(platformPort)],
      plainEnv({ KBCHAT_MEMORY_DIAG: '1' }),
    );
    let report = await memoryLine(running);
    expect(report.mainHeapTotalMB).toBeGreaterThan(0);
    expect(report.rssMB).toBeGreaterThan(report.mainHeapTotalMB as number);
    const threads = report.threads as { thread: string; heapTotalMB: number }[];
    // The gateway's store thread always runs; one answer per thread (the threads do not answer each other).
    expect(threads.filter((t) => t.thread.startsWith('store thread'))).toHaveLength(1);
    expect(new Set(threads.map((t) => t.thread)).size).toBe(threads.length);
    for (const t of threads) expect(t.heapTotalMB).toBeGreaterThan(0);
    // The embedding worker loads its model at start, and keeps no JS copy of the 27 MB of weights
    // (tfjs's artifacts): gone at the worker's next full GC, which V8 runs within seconds of the start.
    const embeddingBuffers = (r: Record<string, unknown>) =>
      (r.threads as { thread: string; arrayBuffersMB: number }[]).find((t) => t.thread.startsWith('embedding worker'))?.arrayBuffersMB;
    // A busy worker may miss a 300 ms collection window (its thread is then absent from that line): asked again.
    const settled = (r: Record<string, unknown>) => (embeddingBuffers(r) ?? Infinity) < 10;
    for (let i = 0; i < 30 && !settled(report); i++) {
      await sleep(1000);
      report = await memoryLine(running);
    }
    expect(embeddingBuffers(report)).toBeDefined();
    expect(embeddingBuffers(report)).toBeLessThan(10);
    expect(running.child.exitCode).toBeNull(); // SIGUSR2 did not end it
  }, 180_000);
});
