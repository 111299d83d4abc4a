// local-extractive over chunks of a long Markdown list (issue 16's audit of
// docs/architecture.md at 100-token chunks): a list item the chunker cut is
// never quoted as if whole, nor is the rest of it that opens the next chunk;
// a steps question is answered with one list (and its continuation), not a
// collage of two lists; and of two items with the question's terms, the one
// in the question's own words wins over a better-ranked inflected one.
import { describe, expect, it } from 'vitest';
import { segmentQuote } from '../src/extractive/segment.js';
import { SENTENCE_END } from '../src/extractive/text.js';
import { extractiveAnswerer } from './helpers.js';

const HEAD = '# kbchat architecture\n## Decisions worth knowing\n';
// The chunk that ends inside the PGlite item, and the next one, as the chunker made them (100 tokens).
const CUT_ITEM = `${HEAD}to about 10 ms while embedding (5 ms idle).\n- **PGlite memory.** 16 MB of shared buffers for the gateway (32 MB for the platform), and a new data dir is created (initdb) in a short-lived child process, so its ~450 MB`;
const ITEM_REST = `${HEAD}MB go with it (in-process, or even in a worker thread, much of it stayed resident), and the store's own thread adds about 60 MB at rest.\n- **Memory over a long run.** The embedding worker runs the model on at most 8 texts at a time.`;

describe('segmenting a quote cut inside a list item', () => {
  it("keeps a last item without a sentence end out of answers, also as its list's only item", () => {
    const units = segmentQuote(CUT_ITEM, 0);
    expect(units.filter((u) => u.text.includes('~450 MB')).map((u) => [u.kind, u.answerable])).toEqual([['item', false]]);
    // Its bold title alone is no answer either.
    expect(units.some((u) => u.answerable && u.text.includes('PGlite'))).toBe(false);
    // A list of short entries without full stops stays answerable.
    const entries = segmentQuote('Visitors should bring:\n\n- rubber boots\n- a headlamp', 0);
    expect(entries.filter((u) => u.kind === 'item').every((u) => u.answerable)).toBe(true);
  });

  it('keeps the whole sentences before the cut in a cut item answerable, the unfinished one out', () => {
    const units = segmentQuote(
      `${HEAD}- **Cache memory.** Each cache shard keeps at most 64 MB of hot entries. A shard that has gone cold is rebuilt in a short-lived child process, so the`,
      0,
    );
    expect(units.map((u) => [u.text, u.answerable])).toEqual([
      ['- **Cache memory.** Each cache shard keeps at most 64 MB of hot entries.', true],
      ['A shard that has gone cold is rebuilt in a short-lived child process, so the', false],
    ]);
  });

  it('keeps the rest of a cut item that opens a quote, glued to the next item, out of answers', () => {
    const units = segmentQuote(ITEM_REST, 1);
    expect(units[0]!.text.startsWith('MB go with it')).toBe(true);
    expect(units[0]!.answerable).toBe(false);
    expect(units.at(-1)!.answerable).toBe(true);
  });
});

const { answer } = extractiveAnswerer();

const pieces = (text: string) =>
  text
    .split(/\s*\[[^\]]+\]\s*|\n+/)
    .map((p) => p.trim())
    .filter(Boolean);

const TURN = '# kbchat architecture\n## The path of a chat turn (platform)\n';
const STEP_1 =
  "1. `chat/routes.ts` takes application keys only (a general key gets FastGPT's 403 text), parses the body, loads the app (team-scoped) and the history.";
const STEPS_2_3 =
  '2. `chat/pipeline.ts` runs classification, extraction, the search and then the answer call through the gateway.\n3. What streams out goes through a `ChatSink`: `chat/sse.ts` writes OpenAI chunks.';
const OTHER_LIST =
  '# kbchat architecture\n## The path of a request (gateway)\n5. Streams (`relay/chat-stream.ts`) are held back until the first chunk with content, so a retry before that point is invisible to the client.\n6. `run.finish()` settles the real cost with the ledger.';

describe('local-extractive over a cut list', () => {
  it('never quotes a list item the chunker cut, nor its rest at the start of the next chunk', async () => {
    const text = await answer([{ text: ITEM_REST }, { text: CUT_ITEM }], 'How does kbchat handle PGlite memory?');
    expect(text).not.toContain('~450 MB [');
    expect(text).not.toContain('MB go with it');
    for (const p of pieces(text)) expect(p).toMatch(SENTENCE_END);
  });

  it('quotes a sentence longer than a chunk whole when the quotes hold all its pieces, citing each', async () => {
    // The chunker's three chunks of the PGlite item (100 tokens): cut at clauses, each next one opening with the last clause again.
    const quotes = [
      {
        text: `${HEAD}- **Embedding next to relaying.** The embedding worker thread runs at SCHED_IDLE (or nice 19).\n- **PGlite memory.** 16 MB of shared buffers for the gateway (32 MB for the platform), and a new data dir is created (initdb) in a short-lived child process, so its ~450 MB go with it (in-process,`,
      },
      {
        text: `${HEAD}so its ~450 MB go with it (in-process, or even in a worker thread, much of it stayed resident): \`kbchat start\` with both stores rested at about 400 MB; the gateway store's own thread (a second V8 isolate) adds about 60 MB at rest (measured 2026-11-23:`,
      },
      {
        text: `${HEAD}rest (measured 2026-11-23: 398-410 MB in-process, 455-475 MB on the thread).\n- **Memory over a long run.** The embedding worker runs the model on at most 8 texts at a time.`,
      },
    ];
    const text = await answer(quotes, 'How does kbchat handle PGlite memory?');
    expect(text).toBe(
      "- **PGlite memory.** 16 MB of shared buffers for the gateway (32 MB for the platform), and a new data dir is created (initdb) in a short-lived child process, so its ~450 MB go with it (in-process, or even in a worker thread, much of it stayed resident): `kbchat start` with both stores rested at about 400 MB; the gateway store's own thread (a second V8 isolate) adds about 60 MB at rest (measured 2026-11-23: 398-410 MB in-process, 455-475 MB on the thread). [1] [2] [3]",
    );
  });

  it('answers a steps question with one list and its continuation in another quote, not with items of another list', async () => {
    const text = await answer([{ text: OTHER_LIST }, { text: TURN + STEP_1 }, { text: TURN + STEPS_2_3 }], 'What are the steps of a chat turn?');
    expect(text).toContain('1. `chat/routes.ts`');
    expect(text).toContain('2. `chat/pipeline.ts`');
    expect(text).toContain('3. What streams out');
    expect(text).not.toContain('5. Streams');
    // Without the continuation, the one item found, still not the other list's.
    const alone = await answer([{ text: TURN + STEP_1 }, { text: OTHER_LIST }], 'What are the steps of a chat turn?');
    expect(alone).toContain('1. `chat/routes.ts`');
    expect(alone).not.toContain('5. Streams');
  });

  it("prefers the item in the question's own words to a better-ranked one with an inflection of them", async () => {
    const quotes = [
      {
        text: `${HEAD}- **The relay thread runs no SQL and no framework.** The gateway's embedded store (PGlite) runs on a worker thread: under load the request log's COPY took about a quarter of the relay thread.`,
      },
      {
        text: `${HEAD}The relay path stays one.\n- **Embedding next to relaying.** The embedding worker thread runs at SCHED_IDLE (or nice 19), makes the vectors' JSON text itself, and the relay reads a large answer's trailing usage.`,
      },
    ];
    const text = await answer(quotes, 'What priority does the embedding worker thread run at?');
    expect(text).toContain('SCHED_IDLE');
    expect(text).not.toContain('embedded store');
  });
});
