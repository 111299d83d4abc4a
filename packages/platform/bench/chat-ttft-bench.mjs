// Time to first token of an application's chat through the platform (retrieval
// over the indexed SciFact corpus on) minus the same model streamed through the
// gateway directly: p50 and p99 (issue target: p50 difference under 25 ms).
//
// One process, as indexing-bench: the upstream simulator, a real gateway in
// front of it (sim-chat, sim-embed-384) and the platform on its own data dir.
// SciFact goes in through the API, one text collection per 200 abstracts (each
// abstract a "# title" section, so the platform's own chunker splits there);
// without ../shared/datasets/scifact a generated corpus of a few thousand
// paragraphs is used instead, and the output says so.
//
// Measured, sequentially (latency, not throughput), interleaved A,B,A,B... on
// the same question sequence after a warm-up:
//   A  platform: POST /api/v1/chat/completions with the app key, stream=true, an
//      app with model sim-chat bound to the dataset (searchMode mixedRecall:
//      the question is embedded through the gateway, vector + BM25 search);
//      time from sending the request to the first SSE data line with content.
//   B  gateway: POST /v1/chat/completions with the gateway token, sim-chat,
//      the question as the user message, stream=true; time to its first
//      content chunk.
// Then a smaller split pass (detail=true, FastGPT's flowNodeStatus events) says
// where the platform's time goes: until the "Dataset search" status, the
// search itself (to the "AI chat" status, and the search record's
// runningTime), and from "AI chat" to the first content; beside it the
// gateway's TTFT with the platform's real prompt (same quotes, built with the
// platform's buildMessages) and a bare embeddings call for the question.
//
// Knobs: BENCH_REQUESTS (per side, default 300), BENCH_WARMUP (default 20),
// BENCH_SPLIT (split-pass requests, default 100), BENCH_DOCS (first n abstracts).
import { rmSync } from 'node:fs';
import { loadScifact, scifactPresent } from './scifact-corpus.mjs';
import { percentile, startSimStack, waitIndexed } from './sim-stack.mjs';

const SCIFACT_DIR = new URL('../../../../shared/datasets/scifact', import.meta.url).pathname;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const SPLIT = Number(process.env.BENCH_SPLIT ?? 100);
const TARGET_MS = 25;
const KEY = 'kbchat-bench-chat-ttft-key';
const TOKEN = 'sk-bench-chat-ttft';
const DOCS_PER_COLLECTION = 200;

const { buildMessages } = await import('../dist/chat/prompt.js');

/** A deterministic corpus when SciFact is absent: paragraphs and questions over one vocabulary. */
function generatedCorpus(docs = 3000, questions = 600) {
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ta', 'ri', 'so', 'vu', 'pe', 'dra', 'gen', 'cel', 'pro', 'tin', 'ase', 'mer', 'lys', 'ox', 'cyt', 'ine'];
  const vocab = Array.from({ length: 4000 }, () =>
    Array.from({ length: 2 + Math.floor(rand() * 3) }, () => syllables[Math.floor(rand() * syllables.length)]).join(''),
  );
  // Zipf-ish: low indexes much more often.
  const word = () => vocab[Math.floor(vocab.length * rand() ** 2.5)];
  const sentence = (n) => {
    const w = Array.from({ length: n }, word);
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    return `${w.join(' ')}.`;
  };
  const corpus = Array.from({ length: docs }, (_, i) => ({
    id: `gen-${i}`,
    title: sentence(6).slice(0, -1),
    text: Array.from({ length: 6 + Math.floor(rand() * 8) }, () => sentence(10 + Math.floor(rand() * 15))).join(' '),
  }));
  const queries = Array.from({ length: questions }, (_, i) => `What is the role of ${Array.from({ length: 3 + (i % 5) }, word).join(' ')}?`);
  return { corpus, queries };
}

const ms = (v) => `${v.toFixed(1)} ms`;

/**
 * POST a streamed chat and time it: `ttft` is from just before fetch() to the
 * first SSE data line whose chunk carries content; `events` the arrival times
 * of named events (detail=true) by their status name. The body is read to the end.
 */
async function timedStream(url, auth, body) {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let buf = '';
  let ttft;
  let event = null;
  const status = {};
  let flowResponses;
  for await (const piece of res.body) {
    buf += decoder.decode(piece, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trimEnd();
      buf = buf.slice(nl + 1);
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) {
        const data = line.slice(6);
        if (data !== '[DONE]') {
          if (ttft === undefined && (event === null || event === 'answer') && data.includes('"content"')) {
            const text = JSON.parse(data).choices?.[0]?.delta?.content;
            if (typeof text === 'string' && text) ttft = performance.now() - t0;
          } else if (event === 'flowNodeStatus') status[JSON.parse(data).name] = performance.now() - t0;
          else if (event === 'flowResponses') flowResponses = JSON.parse(data);
        }
      } else if (line === '') event = null;
    }
  }
  if (ttft === undefined) throw new Error(`${url}: the stream carried no content`);
  return { ttft, status, flowResponses, total: performance.now() - t0 };
}

const stack = await startSimStack('chat-ttft-bench', { key: KEY, token: TOKEN });
const { gw, dir } = stack;
const platform = await stack.openPlatform('pf');
const api = stack.client(platform);

try {
  let corpus;
  let questions;
  let source;
  if (scifactPresent(SCIFACT_DIR)) {
    const s = loadScifact(SCIFACT_DIR);
    corpus = s.corpus;
    questions = [...s.queries.values()];
    source = `SciFact (${SCIFACT_DIR})`;
  } else {
    const g = generatedCorpus();
    corpus = g.corpus;
    questions = g.queries;
    source = 'a GENERATED corpus';
    console.log(
      `SciFact not found at ${SCIFACT_DIR}: falling back to a generated corpus of ${corpus.length} paragraphs and ${questions.length} generated questions (numbers are not SciFact's)`,
    );
  }
  if (process.env.BENCH_DOCS) corpus = corpus.slice(0, Number(process.env.BENCH_DOCS));

  // Index: one text collection per 200 abstracts, two uploads at a time; then wait for every vector.
  const datasetId = await api('/api/core/dataset/create', { name: 'chat-bench', vectorModel: 'sim-embed-384' });
  const started = performance.now();
  const groups = [];
  for (let i = 0; i < corpus.length; i += DOCS_PER_COLLECTION) groups.push(corpus.slice(i, i + DOCS_PER_COLLECTION));
  let next = 0;
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < groups.length) {
        const g = groups[next++];
        const text = g.map((d) => `# ${d.title.replace(/\s+/g, ' ').trim() || d.id}\n\n${d.text}`).join('\n\n');
        await api('/api/core/dataset/collection/create/text', { datasetId, name: `${g[0].id}..${g.at(-1).id}`, text });
      }
    }),
  );
  const progress = await waitIndexed(api, datasetId, { everyMs: 250 });
  const chunks = progress.total;
  console.log(
    `corpus: ${source}, ${corpus.length} documents -> ${chunks} chunks (${groups.length} collections), indexed in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const appId = await api('/api/core/app/create', { name: 'chat-ttft-bench', model: 'sim-chat', datasets: [datasetId], search: { searchMode: 'mixedRecall' } });
  const appKey = await api('/api/support/openapi/create', { name: 'bench', appId });
  const app = await api(`/api/core/app/detail?appId=${appId}`);
  const platformChat = (question, detail = false) =>
    timedStream(`${platform.url}/api/v1/chat/completions`, appKey, { stream: true, detail, messages: [{ role: 'user', content: question }] });
  const gatewayChat = (messages) => timedStream(`${gw.url}/v1/chat/completions`, TOKEN, { model: 'sim-chat', stream: true, messages });

  const q = (i) => questions[i % questions.length];
  for (let i = 0; i < WARMUP; i++) {
    await platformChat(q(questions.length - 1 - i));
    await gatewayChat([{ role: 'user', content: q(questions.length - 1 - i) }]);
  }
  const a = [];
  const b = [];
  for (let i = 0; i < REQUESTS; i++) {
    // Interleaved; which side goes first alternates too, so neither always follows the other.
    if (i % 2 === 0) {
      a.push((await platformChat(q(i))).ttft);
      b.push((await gatewayChat([{ role: 'user', content: q(i) }])).ttft);
    } else {
      b.push((await gatewayChat([{ role: 'user', content: q(i) }])).ttft);
      a.push((await platformChat(q(i))).ttft);
    }
  }
  const diff = a.map((v, i) => v - b[i]);
  const p50Diff = percentile(a, 50) - percentile(b, 50);
  console.log(
    `TTFT, ${REQUESTS} sequential requests each (interleaved, ${WARMUP} warm-up pairs first), app: sim-chat, ${app.search.searchMode}, quote limit ${app.search.limit} tokens`,
  );
  console.log(`  platform (retrieval on):  p50 ${ms(percentile(a, 50))}, p99 ${ms(percentile(a, 99))}`);
  console.log(`  gateway directly:         p50 ${ms(percentile(b, 50))}, p99 ${ms(percentile(b, 99))}`);
  console.log(
    `  difference: p50(platform) - p50(gateway) ${ms(p50Diff)}; paired differences p50 ${ms(percentile(diff, 50))}, p99 ${ms(percentile(diff, 99))}; p99(platform) - p99(gateway) ${ms(percentile(a, 99) - percentile(b, 99))}`,
  );
  console.log(
    `  target: p50 difference < ${TARGET_MS} ms: ${p50Diff < TARGET_MS && percentile(diff, 50) < TARGET_MS ? 'MET' : 'NOT MET'} (${ms(p50Diff)} / paired ${ms(percentile(diff, 50))})`,
  );

  // Where the platform's time goes (detail=true: status events as the steps start).
  const split = { toSearch: [], search: [], searchRecord: [], aiToFirst: [], ttft: [], gwPrompt: [], gwBare: [], embed: [], quotes: [], promptChars: [] };
  for (let i = 0; i < SPLIT; i++) {
    const question = q(i);
    const r = await platformChat(question, true);
    const s0 = r.status['Dataset search'];
    const s1 = r.status['AI chat'];
    split.toSearch.push(s0);
    split.search.push(s1 - s0);
    split.aiToFirst.push(r.ttft - s1);
    split.ttft.push(r.ttft);
    const rec = r.flowResponses?.find((x) => x.moduleType === 'datasetSearchNode');
    split.searchRecord.push(rec.runningTime * 1000);
    // The gateway with the prompt the platform sent: the same quotes, through the platform's own prompt builder.
    const quotes = rec.quoteList.map((x) => ({ q: x.q, a: x.a, sourceName: x.sourceName, sourceId: x.sourceId }));
    const { messages } = buildMessages({ systemPrompt: '', variables: {}, history: [], question, quotes, maxContext: 16_000, answerTokens: 2000 });
    split.quotes.push(quotes.length);
    split.promptChars.push(messages.reduce((n, m) => n + m.content.length, 0));
    split.gwPrompt.push((await gatewayChat(messages)).ttft);
    split.gwBare.push((await gatewayChat([{ role: 'user', content: question }])).ttft);
    const t = performance.now();
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-embed-384', input: [question], encoding_format: 'base64' }),
    });
    await res.json();
    split.embed.push(performance.now() - t);
  }
  const row = (label, v) => console.log(`  ${label.padEnd(58)} p50 ${ms(percentile(v, 50)).padStart(9)}, p99 ${ms(percentile(v, 99)).padStart(9)}`);
  console.log(`split of the platform's TTFT (${SPLIT} more requests with detail=true, each followed by two gateway calls and an embeddings call):`);
  row('platform TTFT (detail=true)', split.ttft);
  row('  request -> "Dataset search" status (auth, app, parse)', split.toSearch);
  row('  "Dataset search" -> "AI chat" status (search step)', split.search);
  row('    search record runningTime', split.searchRecord);
  row('  "AI chat" -> first content (prompt + model call)', split.aiToFirst);
  row("gateway TTFT, the platform's prompt (same quotes)", split.gwPrompt);
  row('gateway TTFT, the question alone', split.gwBare);
  row('gateway /v1/embeddings of the question (inside the search)', split.embed);
  console.log(`  quotes per answer p50 ${percentile(split.quotes, 50)}, prompt ${percentile(split.promptChars, 50)} chars p50`);
} finally {
  await platform.close();
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
}
