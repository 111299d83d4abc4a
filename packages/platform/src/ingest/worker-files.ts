// Worker threads run the built code (dist/), also under the tests, which run
// the sources: a worker thread cannot load TypeScript. And a worker's
// messages as one stream, for the readers that use workers (chunking, OCR).
import type { Worker } from 'node:worker_threads';

/** The built file of a worker module given by its URL beside the caller (`new URL('./x.js', import.meta.url)`). */
export function builtWorkerUrl(here: URL): URL {
  return here.href.includes('/src/') && import.meta.url.endsWith('.ts') ? new URL(here.href.replace(/\/src\/(?!.*\/src\/)/, '/dist/')) : here;
}

/**
 * The process's Node options for a worker, less export conditions: the
 * tests run with "source" (workspace packages from their TypeScript), which
 * the built worker cannot load. Undefined (the worker inherits them, as Node
 * allows) when there are none to take out: a worker given explicit options
 * refuses the process-wide ones (--expose-gc).
 */
export function workerExecArgv(): string[] | undefined {
  const args: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const a = process.execArgv[i]!;
    if (a === '--conditions' || a === '-C') i++;
    else if (!a.startsWith('--conditions=')) args.push(a);
  }
  return args.length === process.execArgv.length ? undefined : args;
}

/**
 * A worker's messages in the order sent; its error, or its exit, is thrown
 * where it comes in that order. The worker is terminated when the caller
 * stops reading (or the stream ends).
 */
export async function* workerMessages<M>(worker: Worker, name: string): AsyncGenerator<M> {
  const inbox: ({ message: M } | { error: Error })[] = [];
  let wake: (() => void) | undefined;
  const deliver = (x: (typeof inbox)[number]) => {
    inbox.push(x);
    wake?.();
  };
  worker.on('message', (message: M) => deliver({ message }));
  worker.on('error', (error) => deliver({ error }));
  worker.on('exit', (code) => deliver({ error: new Error(`the ${name} worker stopped (exit code ${code})`) }));
  try {
    for (;;) {
      if (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const next = inbox.shift()!;
      if ('error' in next) throw next.error;
      yield next.message;
    }
  } finally {
    worker.removeAllListeners();
    await worker.terminate();
  }
}
