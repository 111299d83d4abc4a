// The embedding worker runs the model on at most `subBatch` texts at a time
// (its WASM memory grows to the largest run and stays there): a batch split so
// must give the same vectors, in the same order, as one run over all of it.
import { afterEach, describe, expect, it } from 'vitest';
import { EmbedPool } from '../src/embeddings/embed-pool.js';

const texts = Array.from(
  { length: 11 },
  (_, i) => `Sentence ${i} about ${i % 2 ? 'rivers and mountains' : 'invoices, printers and a refund policy'} in the handbook.`,
);

const pools: EmbedPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

async function vectorsWith(subBatch: number): Promise<Float32Array[]> {
  const pool = new EmbedPool({ workers: 1, maxBatch: 64, subBatch });
  pools.push(pool);
  await pool.warmup();
  return (await pool.embed(texts, 'bulk')).vectors;
}

describe('the embedding worker in sub-batches (real worker and model)', () => {
  it('gives the same vectors in the same order as one run over the whole batch', async () => {
    const whole = await vectorsWith(64);
    const split = await vectorsWith(3);
    expect(split).toHaveLength(texts.length);
    for (let i = 0; i < texts.length; i++) {
      let maxDiff = 0;
      for (let j = 0; j < 512; j++) maxDiff = Math.max(maxDiff, Math.abs(split[i]![j]! - whole[i]![j]!));
      expect(maxDiff).toBeLessThan(1e-5);
    }
    // Different texts, different vectors: the rows were not shifted or repeated.
    expect(Math.abs(split[0]![0]! - split[1]![0]!) + Math.abs(split[0]![1]! - split[1]![1]!)).toBeGreaterThan(0);
  });
});
