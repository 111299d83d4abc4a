// The priority lane of local-embed: interactive embeddings (a chat's question,
// local-extractive's sentences) go ahead of indexing, indexing batches shrink
// while someone chats, and neither lane starves the other. The pool tests run
// the real worker thread and model on small inputs; the lane tests drive the
// scheduler itself with chosen clock readings.
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalModels, type LocalModels } from '@kbchat/local-models';
import { EmbedPool } from '../src/embeddings/embed-pool.js';
import { CHAT_HOLD_MS, EmbedLanes, FAIR_SHARE_MS, type EmbedPriority, type LaneJob } from '../src/embeddings/embed-lanes.js';
import { postJson } from './helpers.js';

const sentence = (i: number) => `Indexed sentence ${i} about rivers and mountains.`;

const pools: EmbedPool[] = [];
const servers: LocalModels[] = [];
afterEach(async () => {
  await Promise.all([...pools.splice(0).map((p) => p.close()), ...servers.splice(0).map((s) => s.close())]);
});

async function startedPool(enabled: boolean, maxBatch = 4): Promise<EmbedPool> {
  const pool = new EmbedPool({ workers: 1, maxBatch, enabled });
  pools.push(pool);
  await pool.warmup();
  return pool;
}

/** 30 indexing calls of 2 texts each, queued at once, and then a 6-text interactive request: how many of the indexing texts were embedded before it was answered. */
async function bulkTextsBeforeInteractive(pool: EmbedPool): Promise<number> {
  const bulk = Array.from({ length: 30 }, (_, j) => pool.embed([sentence(2 * j), sentence(2 * j + 1)], 'bulk'));
  let before = -1;
  const interactive = pool.embed(['How high is the mountain?', 'a', 'b', 'c', 'd', 'e'], 'interactive').then((r) => {
    before = pool.stats.texts.bulk + pool.stats.texts.interactive - 6; // with the lane off, its own texts count as bulk
    return r;
  });
  const [answer] = await Promise.all([interactive, ...bulk]);
  expect(answer.vectors).toHaveLength(6);
  return before;
}

describe('the embedding pool with a priority lane (real worker and model)', () => {
  it('serves an interactive request before queued indexing batches', async () => {
    const laned = await startedPool(true);
    const onLane = await bulkTextsBeforeInteractive(laned);
    // Only the batch already in the worker when it arrived (maxBatch 4) went first.
    expect(onLane).toBeLessThanOrEqual(4);
    expect(laned.stats.batches.interactive).toBe(2); // 6 texts, batches of 4

    // Without the lane (as before) it took its turn round-robin behind the 30 calls.
    const plain = await startedPool(false);
    const offLane = await bulkTextsBeforeInteractive(plain);
    console.log(`indexing texts embedded before the interactive request: ${onLane} with the lane, ${offLane} without`);
    expect(offLane).toBeGreaterThanOrEqual(30); // of 60
  });

  it('starves nobody: indexing completes while interactive requests keep coming', async () => {
    const pool = await startedPool(true);
    let stop = false;
    let interactiveDone = 0;
    // Two askers, each sending its next request as soon as the last is answered: an interactive request always waits.
    const askers = Array.from({ length: 2 }, async (_, a) => {
      for (let i = 0; !stop; i++) {
        await pool.embed([`question ${a}-${i} about the weather?`, `another ${i}`, `more ${i}`, `last ${i}`], 'interactive');
        interactiveDone++;
      }
    });
    const started = performance.now();
    const indexing = await Promise.race([
      pool
        .embed(
          Array.from({ length: 12 }, (_, i) => sentence(i)),
          'bulk',
        )
        .then((r) => r.vectors.length),
      new Promise<'starved'>((resolve) => setTimeout(() => resolve('starved'), 20_000)),
    ]);
    const interactiveMeanwhile = interactiveDone;
    stop = true;
    await Promise.all(askers);
    console.log(`12 bulk texts done in ${(performance.now() - started).toFixed(0)} ms while ${interactiveMeanwhile} interactive requests were answered`);
    expect(indexing).toBe(12);
    // The askers really competed the whole time (and were not starved either).
    expect(interactiveMeanwhile).toBeGreaterThan(5);
    expect(pool.stats.busyMs.interactive).toBeGreaterThan(FAIR_SHARE_MS);
  });
});

describe('local-embed over HTTP with the lane', () => {
  it('answers a question and a local-extractive chat before two indexing-size requests', async () => {
    const lm = await startLocalModels({ warmup: true, embedMaxBatch: 4 });
    servers.push(lm);
    const finished: string[] = [];
    const indexing = [0, 1].map((k) =>
      postJson(lm.baseUrl, '/embeddings', { model: 'local-embed', input: Array.from({ length: 64 }, (_, i) => sentence(100 * k + i)) }).then((r) => {
        expect(r.status, r.text).toBe(200);
        finished.push(`indexing ${k}`);
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
    const question = postJson(lm.baseUrl, '/embeddings', { model: 'local-embed', input: ['How high is the mountain?'] }).then((r) => {
      expect(r.status, r.text).toBe(200);
      finished.push('question');
    });
    const chat = postJson(lm.baseUrl, '/chat/completions', {
      model: 'local-extractive',
      messages: [
        {
          role: 'user',
          content:
            '<Reference>\n<quote id="1">The mountain is 4,810 metres high. Rivers run from it to the sea.</quote>\n</Reference>\nQuestion: How high is the mountain?',
        },
      ],
    }).then((r) => {
      expect(r.status, r.text).toBe(200);
      expect(r.json.choices[0].message.content).toContain('4,810');
      finished.push('chat');
    });
    await Promise.all([...indexing, question, chat]);
    expect(finished.slice(0, 2).sort()).toEqual(['chat', 'question']);
  });
});

describe('X-Kbchat-Priority: the lane a request asks for', () => {
  /** 24 one-text requests (each small enough to pass for a question), then a one-text question: how many of the 24 were answered before it. */
  async function answeredBeforeQuestion(lm: LocalModels, headers: Record<string, string>): Promise<number> {
    let answered = 0;
    const indexing = Array.from({ length: 24 }, (_, i) =>
      postJson(lm.baseUrl, '/embeddings', { model: 'local-embed', input: [sentence(i)] }, headers).then((r) => {
        expect(r.status, r.text).toBe(200);
        answered++;
      }),
    );
    await new Promise((r) => setTimeout(r, 100));
    let before = -1;
    const question = postJson(lm.baseUrl, '/embeddings', { model: 'local-embed', input: ['How high is the mountain?'] }).then((r) => {
      expect(r.status, r.text).toBe(200);
      before = answered;
    });
    await Promise.all([...indexing, question]);
    return before;
  }

  it('a small request marked bulk waits behind a question; unmarked, its size makes it interactive', async () => {
    const lm = await startLocalModels({ warmup: true, embedMaxBatch: 4 });
    servers.push(lm);
    const marked = await answeredBeforeQuestion(lm, { 'X-Kbchat-Priority': 'bulk' });
    const unmarked = await answeredBeforeQuestion(lm, {});
    console.log(`one-text indexing requests answered before the question: ${marked} marked bulk, ${unmarked} unmarked`);
    expect(marked).toBeLessThanOrEqual(8); // the batch in the worker when it came, at most one more
    expect(unmarked).toBeGreaterThanOrEqual(16); // the same lane, first come first served
  });

  it('refuses another value with a 400 naming the header', async () => {
    const lm = await startLocalModels({ embedMaxBatch: 4 });
    servers.push(lm);
    const r = await postJson(lm.baseUrl, '/embeddings', { model: 'local-embed', input: ['a'] }, { 'X-Kbchat-Priority': 'urgent' });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', param: 'X-Kbchat-Priority' });
    expect(r.json.error.message).toMatch(/'bulk' or 'interactive'.*"urgent"/);
  });

  it('LOCAL_EMBED_PRIORITY: a value other than on/off (a typo) is refused at start, naming the variable and the values', async () => {
    const saved = process.env.LOCAL_EMBED_PRIORITY;
    try {
      process.env.LOCAL_EMBED_PRIORITY = 'of';
      await expect(startLocalModels()).rejects.toThrow(/^LOCAL_EMBED_PRIORITY must be on or off \(also true\/false, 1\/0, yes\/no\); got "of"$/);
      process.env.LOCAL_EMBED_PRIORITY = 'OFF';
      const lm = await startLocalModels();
      servers.push(lm);
    } finally {
      if (saved === undefined) delete process.env.LOCAL_EMBED_PRIORITY;
      else process.env.LOCAL_EMBED_PRIORITY = saved;
    }
  });
});

describe('the lanes themselves', () => {
  const job = (priority: EmbedPriority, count: number, chars = 400): LaneJob => ({
    texts: Array.from({ length: count }, () => 'x'.repeat(chars)),
    priority,
    next: 0,
  });
  const options = { enabled: true, maxBatch: 32, bulkBatchMs: 1000, busyBatchMs: 150 };

  it('cuts indexing batches short while someone chats, and back after', () => {
    const lanes = new EmbedLanes(options);
    lanes.add(job('bulk', 200));
    const idle = lanes.take(0)!;
    lanes.finished(idle, 1000, 1000); // 0.25 ms a character, as first guessed
    lanes.add(job('interactive', 1, 40));
    const asked = lanes.take(1000)!;
    expect(asked.priority).toBe('interactive');
    lanes.finished(asked, 30, 1030);
    const busy = lanes.take(1030)!;
    expect(busy.priority).toBe('bulk');
    lanes.finished(busy, 100, 1130);
    const later = lanes.take(1030 + CHAT_HOLD_MS + 1)!;
    // ~1000 ms of chunks while nobody chats, ~150 ms (one 400-character text) while someone does.
    expect(idle.items.length).toBeGreaterThanOrEqual(8);
    expect(busy.items.length).toBe(1);
    expect(later.items.length).toBeGreaterThanOrEqual(8);
  });

  it('gives indexing a batch after FAIR_SHARE_MS of interactive work while both wait', () => {
    const lanes = new EmbedLanes(options);
    lanes.add(job('bulk', 100));
    const order: EmbedPriority[] = [];
    let now = 0;
    for (let i = 0; i < 30; i++) {
      lanes.add(job('interactive', 2, 40)); // someone always waits
      const batch = lanes.take(now)!;
      order.push(batch.priority);
      now += 100;
      lanes.finished(batch, 100, now);
    }
    const bulkTurns = order.filter((p) => p === 'bulk').length;
    expect(order[0]).toBe('interactive');
    expect(bulkTurns).toBeGreaterThanOrEqual(2);
    expect(bulkTurns).toBeLessThanOrEqual(3);
  });

  it('is one round-robin lane of maxBatch texts when turned off', () => {
    const lanes = new EmbedLanes({ ...options, enabled: false, maxBatch: 5 });
    const a = job('bulk', 10);
    const b = job('interactive', 2);
    lanes.add(a);
    lanes.add(b);
    const batch = lanes.take(0)!;
    expect(batch.items.map((i) => (i.job === a ? 'a' : 'b'))).toEqual(['a', 'b', 'a', 'b', 'a']);
  });
});
