// The worker side of PGliteThread (pglite-thread.ts): opens PGlite with the
// given target and runs the queries it is sent, one at a time, in order.
import { BroadcastChannel, parentPort, threadId, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { openPGlite } from './pglite.js';
import type { ThreadRequest, ThreadReply, ThreadOptions } from './pglite-thread.js';

/** An error as plain data: its message, and the fields callers test (code, constraint, detail...). */
function plainError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const out: Record<string, unknown> = { name: err.name, message: err.message };
  for (const [key, value] of Object.entries(err)) {
    if (value === undefined || typeof value === 'function' || (typeof value === 'object' && value !== null)) continue;
    out[key] = value;
  }
  return out;
}

const port = parentPort!;

// KBCHAT_MEMORY_DIAG=1 (cli/src/memory-diag.ts): this thread's own V8 heap, when the main thread asks.
if (process.env.KBCHAT_MEMORY_DIAG === '1') {
  const diag = new BroadcastChannel('kbchat:memory-diag');
  // Only the main thread's question is answered (the other threads' answers come here too).
  diag.onmessage = (event) => {
    if ((event as { data: unknown }).data === 'report') diag.postMessage({ thread: `store thread (PGlite) #${threadId}`, ...process.memoryUsage() });
  };
  diag.unref();
}
const { target, options } = workerData as { target: string; options: ThreadOptions };
const reply = (message: ThreadReply) => port.postMessage(message);

let pg: PGlite;
try {
  // The thread's owner holds the store's lock (PGliteThread.open).
  pg = await openPGlite(target, { ...options, lock: false });
  reply({ id: 0, ready: true });
} catch (err) {
  reply({ id: 0, error: plainError(err) });
  process.exit(1);
}

// One query at a time: PGlite has one session, and a transaction's statements
// must run in the order they were sent.
let queue: Promise<void> = Promise.resolve();
port.on('message', (msg: ThreadRequest) => {
  queue = queue.then(async () => {
    if (msg.close) {
      await pg.close();
      reply({ id: msg.id });
      port.close();
      return;
    }
    try {
      const res = await pg.query(msg.sql, msg.params, msg.blob ? { blob: msg.blob } : undefined);
      reply({ id: msg.id, rows: res.rows, affectedRows: res.affectedRows });
    } catch (err) {
      reply({ id: msg.id, error: plainError(err) });
    }
  });
});
