// Answer quality of the embedded default, the way a user gets it: `kbchat
// start` with no provider key (a real process), the documents in
// bench/answers/ uploaded as files (Markdown wrapped at 80 columns, a PDF, a
// Word document, a CSV) into one dataset indexed with local-embed, an
// application on local-extractive over it (default search settings), and
// every question through POST /api/v1/chat/completions with the app's key.
//
// Printed: the share of answers that contain the expected fact, the share of
// answers made only of whole sentences of the documents (each piece of an
// answer between markers and line breaks, markers stripped, must appear in a
// document's text with its line breaks unwrapped, starting and ending at a
// sentence, list item or table row boundary; refusals are not counted), and
// the share of right "no answer" replies on questions the documents do not
// cover. Targets (issue 16): >= 90% facts, 100% whole sentences, >= 90% no answer.
// An answer with a fact also must not hold the question's `not` strings
// (another list's steps glued on, the wrong item of two alike).
//
// BENCH_BASELINE_DIR=<a built kbchat checkout> runs the same bench against
// that checkout's `kbchat start` first (e.g. main: `git worktree add
// /tmp/kbchat-main main && cd /tmp/kbchat-main && npm ci`) and prints both,
// with the differences. BENCH_VERBOSE=1 prints every answer, else only misses.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadDocuments } from './answers/documents.mjs';
import { REPO, startKbchat } from './kbchat-process.mjs';
import { ANSWERABLE, UNANSWERABLE } from './answers/questions.mjs';
import { client } from './platform-api.mjs';

const KEY = 'kbchat-answers-bench-key-0123456789';
const NOT_FOUND = 'I could not find an answer to that in the provided knowledge.';
const VERBOSE = process.env.BENCH_VERBOSE === '1';
const TARGETS = { facts: 0.9, whole: 1, none: 0.9 };

/** `kbchat start` of the checkout at `repoDir` on a fresh data dir, removed when it stops. */
async function startFresh(repoDir) {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-answers-bench-'));
  const kb = await startKbchat({ repoDir, dataDir, key: KEY });
  return {
    url: kb.url,
    async stop() {
      await kb.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Uploads the documents, waits for their indexing, and asks every question through an app on local-extractive. */
async function runAgainst(repoDir, docs, questions) {
  const started = performance.now();
  const kb = await startFresh(repoDir);
  try {
    const api = client(kb.url, KEY);
    const datasetId = await api('/api/core/dataset/create', { name: 'answers bench' });
    for (const d of docs) {
      const form = new FormData();
      form.append('data', JSON.stringify({ datasetId }));
      form.append('file', new Blob([d.bytes]), d.name);
      const res = await fetch(`${kb.url}/api/core/dataset/collection/create/localFile`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}` },
        body: form,
      });
      if (res.status !== 200) throw new Error(`upload of ${d.name}: ${res.status} ${await res.text()}`);
    }
    let progress;
    for (;;) {
      progress = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
      if (progress.failed) throw new Error(`indexing failed: ${progress.lastError}`);
      if (progress.total > 0 && progress.done === progress.total) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const indexedS = (performance.now() - started) / 1000;
    const appId = await api('/api/core/app/create', { name: 'answers bench', model: 'local-extractive', datasets: [datasetId] });
    const appKey = await api('/api/support/openapi/create', { name: 'bench', appId });
    const answers = [];
    for (const question of questions) {
      const t = performance.now();
      const res = await fetch(`${kb.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${appKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: question.q }] }),
      });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`chat "${question.q}": ${res.status} ${JSON.stringify(body)}`);
      answers.push({ ...question, answer: body.choices[0].message.content, ms: performance.now() - t });
    }
    return { answers, chunks: progress.total, indexedS };
  } finally {
    await kb.stop();
  }
}

function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

const norm = (s) => s.replace(/\s+/g, ' ').trim();
const stripMarkers = (s) => s.replace(/\s*\[[^\]\s]{1,40}\]/g, '');
const cells = (row) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => norm(c));
// A sentence ends at . ! ? (or their CJK forms), after which closing quotes, brackets or Markdown marks may stand.
const ENDS_SENTENCE = /[.!?。！？]["'”’)\]*_`]*$/;
const CJK_STOP = /[。！？]$/;

/** Whether `piece` occurs in `block` starting and ending at a sentence, item or row boundary. */
function wholeIn(piece, block) {
  for (let at = block.indexOf(piece); at >= 0; at = block.indexOf(piece, at + 1)) {
    const before = block.slice(0, at);
    const after = block.slice(at + piece.length);
    const starts =
      at === 0 ||
      (/\s$/.test(before) && ENDS_SENTENCE.test(before.trimEnd())) ||
      CJK_STOP.test(before) ||
      /^(\d+\.|[-*])\s+$/.test(before) ||
      /\|\s*$/.test(before);
    const ends = after === '' || (ENDS_SENTENCE.test(piece) && /^(\s|\p{Script=Han}|$)/u.test(after)) || /^\s*\|/.test(after);
    if (starts && ends) return true;
  }
  return false;
}

/** The pieces of an answer (between markers and line breaks) that are not whole sentences of any document. */
function brokenPieces(answer, blocks) {
  const pieces = answer
    .split(/\s*\[[^\]\s]{1,40}\]\s*|\n+/)
    .map(norm)
    .filter(Boolean);
  return pieces.filter((piece) => {
    if (piece.startsWith('|')) {
      if (/^\|[\s:|-]+\|$/.test(piece)) return false; // a table's separator row
      const want = cells(piece).join('|');
      return !blocks.some((b) => b.startsWith('|') && cells(b).join('|') === want);
    }
    // A list item may come with or without its bullet or number.
    const text = piece.replace(/^(\d+[.)]|[-*+•])\s+/, '');
    return !blocks.some((b) => wholeIn(text, b));
  });
}

function evaluate(run, blocks) {
  const answered = run.answers.filter((a) => !a.none);
  const refused = (a) => a.answer.includes(NOT_FOUND);
  const says = (a, f) => norm(stripMarkers(a.answer)).toLowerCase().includes(f.toLowerCase());
  // The expected facts, and none of what would make the answer a collage or the wrong item (`not`).
  const hasFact = (a) => [a.fact].flat().every((f) => says(a, f)) && !(a.not ?? []).some((f) => says(a, f));
  const given = run.answers.filter((a) => !refused(a));
  const broken = given.map((a) => ({ a, bad: brokenPieces(a.answer, blocks) })).filter((x) => x.bad.length);
  const none = run.answers.filter((a) => a.none);
  return {
    facts: answered.filter(hasFact).length / answered.length,
    factMisses: answered.filter((a) => !hasFact(a)),
    whole: given.length ? (given.length - broken.length) / given.length : 1,
    broken,
    none: none.filter(refused).length / none.length,
    noneMisses: none.filter((a) => !refused(a)),
    wrongRefusals: answered.filter(refused).length,
    counts: { answered: answered.length, given: given.length, none: none.length },
    p50: percentile(
      run.answers.map((a) => a.ms),
      50,
    ),
    p99: percentile(
      run.answers.map((a) => a.ms),
      99,
    ),
  };
}

const pct = (x) => `${(x * 100).toFixed(1)}%`;
const oneLine = (s) => s.replace(/\n/g, ' ⏎ ');

function report(label, run, e) {
  console.log(
    `\n${label}: ${run.chunks} chunks indexed in ${run.indexedS.toFixed(1)} s (start included); answer latency p50 ${e.p50.toFixed(0)} ms, p99 ${e.p99.toFixed(0)} ms`,
  );
  console.log(
    `  answers with the expected fact:     ${pct(e.facts).padStart(6)} (${Math.round(e.facts * e.counts.answered)}/${e.counts.answered}; ${e.wrongRefusals} refused)   target >= ${pct(TARGETS.facts)}: ${e.facts >= TARGETS.facts ? 'MET' : 'NOT MET'}`,
  );
  console.log(
    `  answers made only of whole sentences: ${pct(e.whole).padStart(6)} (${e.counts.given - e.broken.length}/${e.counts.given} answers that were not refusals)   target ${pct(TARGETS.whole)}: ${e.whole >= TARGETS.whole ? 'MET' : 'NOT MET'}`,
  );
  console.log(
    `  right "no answer" on uncovered questions: ${pct(e.none).padStart(6)} (${Math.round(e.none * e.counts.none)}/${e.counts.none})   target >= ${pct(TARGETS.none)}: ${e.none >= TARGETS.none ? 'MET' : 'NOT MET'}`,
  );
  for (const a of e.factMisses)
    console.log(`    fact missing (${[a.fact].flat().join(', ')}${a.not ? `; not: ${a.not.join(', ')}` : ''}): ${a.q}\n      -> ${oneLine(a.answer)}`);
  for (const { a, bad } of e.broken) console.log(`    not whole: ${a.q}\n      -> ${bad.map((b) => JSON.stringify(b)).join(' ')}`);
  for (const a of e.noneMisses) console.log(`    answered, should not have: ${a.q}\n      -> ${oneLine(a.answer)}`);
  if (VERBOSE) for (const a of run.answers) console.log(`    ${a.q}\n      -> ${oneLine(a.answer)}`);
}

const docs = await loadDocuments();
const blocks = docs.flatMap((d) => d.blocks).map(norm);
const questions = [...ANSWERABLE, ...UNANSWERABLE.map((q) => ({ ...q, none: true }))];
console.log(
  `answers bench: ${docs.length} documents (${docs.map((d) => d.name).join(', ')}), ${ANSWERABLE.length} questions with expected facts, ${UNANSWERABLE.length} the documents do not cover`,
);

const results = [];
if (process.env.BENCH_BASELINE_DIR) {
  const dir = resolve(process.env.BENCH_BASELINE_DIR);
  const run = await runAgainst(dir, docs, questions);
  results.push({ label: `baseline (${dir})`, e: evaluate(run, blocks) });
  report(results[0].label, run, results[0].e);
} else console.log('(no BENCH_BASELINE_DIR: this checkout only; see docs/benchmarks.md for the figures before issue 16)');

const run = await runAgainst(REPO, docs, questions);
const current = { label: `this checkout (${REPO})`, e: evaluate(run, blocks) };
report(current.label, run, current.e);
if (results.length) {
  const b = results[0].e;
  const c = current.e;
  const d = (x, y) => `${((y - x) * 100).toFixed(1)} points`;
  console.log(
    `\nthis checkout against the baseline: facts ${pct(b.facts)} -> ${pct(c.facts)} (${d(b.facts, c.facts)}), whole sentences ${pct(b.whole)} -> ${pct(c.whole)} (${d(b.whole, c.whole)}), no answer ${pct(b.none)} -> ${pct(c.none)} (${d(b.none, c.none)}), latency p50 x${(c.p50 / b.p50).toFixed(2)}`,
  );
}
