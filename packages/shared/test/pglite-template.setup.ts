// vitest's global setup: one PGlite data dir made by initdb, which every store
// the tests make copies (PGLITE_TEMPLATE, shared/src/pglite.ts) instead of
// running initdb itself: seconds of CPU saved per store, hundreds of stores.
// Child processes the tests start (kbchat start) inherit it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePGliteTemplate } from '../src/pglite.js';

export default async function setup(): Promise<() => void> {
  // Each vitest project runs the global setup again, in the same process: one template serves them all.
  if (process.env.PGLITE_TEMPLATE) return () => {};
  const root = mkdtempSync(join(tmpdir(), 'kbchat-pglite-template-'));
  const dir = join(root, 'data');
  await makePGliteTemplate(dir);
  process.env.PGLITE_TEMPLATE = dir;
  return () => rmSync(root, { recursive: true, force: true });
}
