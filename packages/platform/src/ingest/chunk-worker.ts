// The worker thread that reads and chunks a large input (chunk-stream.ts):
// its job in workerData; each batch posted, then a wait for "next", so that
// batches cross one at a time; or, counting, one message with the count.
import { parentPort, workerData } from 'node:worker_threads';
import { batchesOf, ChunkTally, refusalOf, type ChunkJob, type WorkerMessage } from './chunk-stream.js';

const job = workerData as ChunkJob;
const port = parentPort!;
let taken: (() => void) | undefined;
port.on('message', () => taken?.());
const post = (m: WorkerMessage) => port.postMessage(m);
const nothing = () => Promise.resolve();

try {
  if (job.mode === 'count') {
    const tally = new ChunkTally(job.sampleSize ?? 16);
    for await (const batch of batchesOf(job.input, job.settings, 1000, nothing)) for (const chunk of batch) tally.add(chunk);
    post({ type: 'counted', ...tally.result() });
  } else {
    for await (const chunks of batchesOf(job.input, job.settings, job.batchSize ?? 1000, nothing)) {
      const next = new Promise<void>((resolve) => (taken = resolve));
      post({ type: 'batch', chunks });
      await next;
    }
    post({ type: 'end' });
  }
} catch (err) {
  post(refusalOf(err));
}
