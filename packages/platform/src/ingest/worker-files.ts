// Worker threads run the built code (dist/), also under the tests, which run
// the sources: a worker thread cannot load TypeScript.

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
