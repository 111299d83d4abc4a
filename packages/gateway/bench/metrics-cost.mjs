// What the relay's metrics cost a request, in process (no network noise): the
// calls a relayed request makes (finished + one upstream attempt) on the
// gateway's RelayStats, against the same numbers kept with prom-client's own
// labelled inc()/observe(). Run: node packages/gateway/bench/metrics-cost.mjs
import { Counter, Histogram, Registry } from 'prom-client';
import { RelayStats } from '../dist/metrics/relay-stats.js';
import { LATENCY_BUCKETS } from '../dist/metrics/relay-stats.js';

const N = Number(process.env.BENCH_N ?? 2_000_000);
const models = ['sim-chat', 'gpt-4o-mini', 'text-embedding-3-small'];

function timeIt(label, fn) {
  for (let i = 0; i < 200_000; i++) fn(i); // warm-up: let V8 optimise
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) fn(i);
    runs.push(Number(process.hrtime.bigint() - t0) / N);
  }
  runs.sort((a, b) => a - b);
  console.log(`${label.padEnd(40)} median ${runs[2].toFixed(0)} ns a request (runs ${runs.map((x) => x.toFixed(0)).join(', ')})`);
}

const stats = new RelayStats();
timeIt('RelayStats (plain fields)', (i) => {
  const model = models[i % 3];
  stats.upstream('chat', 1 + (i & 1), model, 0.012, undefined);
  stats.finished('chat', model, 1 + (i & 1), 200, 13, 25, 40, 2900);
});

const r = new Registry();
const labels = ['endpoint', 'channel', 'model'];
const requests = new Counter({ name: 'req', help: 'h', labelNames: [...labels, 'status'], registers: [r] });
const duration = new Histogram({ name: 'dur', help: 'h', labelNames: labels, buckets: [...LATENCY_BUCKETS], registers: [r] });
const upstream = new Histogram({ name: 'up', help: 'h', labelNames: labels, buckets: [...LATENCY_BUCKETS], registers: [r] });
const tokens = new Counter({ name: 'tok', help: 'h', labelNames: [...labels, 'type'], registers: [r] });
const spend = new Counter({ name: 'spend', help: 'h', labelNames: labels, registers: [r] });
timeIt('prom-client labelled inc/observe', (i) => {
  const model = models[i % 3];
  const channel = String(1 + (i & 1));
  upstream.observe({ endpoint: 'chat', channel, model }, 0.012);
  requests.inc({ endpoint: 'chat', channel, model, status: '200' });
  duration.observe({ endpoint: 'chat', channel, model }, 0.013);
  tokens.inc({ endpoint: 'chat', channel, model, type: 'prompt' }, 25);
  tokens.inc({ endpoint: 'chat', channel, model, type: 'completion' }, 40);
  spend.inc({ endpoint: 'chat', channel, model }, 0.0029);
});
