#!/usr/bin/env node
// The fault suite: real kbchat processes, real databases, real kills.
//   node faults/run.mjs            every case
//   node faults/run.mjs money      only the cases whose name contains "money"
// Prints one table of what each case showed; exits 1 if any check failed.
// Run `npm run build` first (npm run test:faults does): the processes run dist/.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fallbackCase } from './fallback.mjs';
import { groupsCase } from './groups.mjs';
import { httpFrontCase } from './http-front.mjs';
import { indexingCase } from './indexing.mjs';
import { keyPoolCase, POOL_GOOD_KEY } from './key-pool.mjs';
import { killAll, REPO, Report } from './lib.mjs';
import { moneyCase } from './money.mjs';
import { rateLimitsCase } from './rate-limits.mjs';

const { startUpstreamSim } = await import(pathToFileURL(join(REPO, 'packages/upstream-sim/dist/index.js')).href);

const SIM_KEY = 'sk-faults-sim-key';
const cases = [
  // sim-slow answers after 1.5 s, so that a kill finds requests in flight.
  { name: 'money on PostgreSQL', sim: { slowMs: 1500 }, run: (r, sim) => moneyCase(r, 'postgres', sim) },
  { name: 'money on MariaDB', sim: { slowMs: 1500 }, run: (r, sim) => moneyCase(r, 'mysql', sim) },
  // Each embeddings call takes 150 ms, so that an upload of 300 chunks is caught midway.
  { name: 'kill -9 of kbchat start while indexing', sim: { embedDelayMs: 150 }, run: indexingCase },
  { name: 'HTTP fronts', sim: {}, run: httpFrontCase },
  { name: 'fallback while a model is down', sim: {}, run: fallbackCase },
  // The simulator takes a second key besides the suite's, so that the pool has two good keys and one wrong.
  { name: 'key pool with a wrong key', sim: { keys: [POOL_GOOD_KEY] }, run: keyPoolCase },
  { name: 'rate limits on MariaDB with Redis', sim: {}, run: rateLimitsCase },
  { name: 'groups: half price is exactly half', sim: {}, run: groupsCase },
];

const filter = process.argv.slice(2).map((a) => a.toLowerCase());
const chosen = cases.filter((c) => filter.length === 0 || filter.some((f) => c.name.toLowerCase().includes(f)));
const report = new Report();
const began = Date.now();

for (const c of chosen) {
  const started = Date.now();
  process.stdout.write(`[faults] ${c.name} ...`);
  const sim = await startUpstreamSim({ port: 0, key: SIM_KEY, ...c.sim });
  try {
    await c.run(report, { url: sim.url, key: SIM_KEY });
  } catch (err) {
    report.check(c.name, 'ran to its end', false, (err.stack ?? String(err)).split('\n').slice(0, 6).join(' | '));
  } finally {
    killAll();
    await sim.close();
  }
  process.stdout.write(` ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

console.log(`\n${report.table()}\n`);
const failed = report.failed;
const skipped = report.rows.filter((r) => r.result === 'skip').length;
console.log(`[faults] ${report.rows.length - failed - skipped} passed, ${failed} failed, ${skipped} skipped, in ${((Date.now() - began) / 1000).toFixed(0)} s`);
process.exit(failed > 0 ? 1 : 0);
