import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isNodeLlamaCppInstalled, startLocalModels, type LocalModels } from '@kbchat/local-models';
import { postJson, sseEvents } from './helpers.js';
import { writeTinyLlamaGguf } from './tiny-gguf.js';

const dir = mkdtempSync(join(tmpdir(), 'kbchat-gguf-'));
const ggufPath = join(dir, 'tiny.gguf');
writeTinyLlamaGguf(ggufPath);
const installed = isNodeLlamaCppInstalled();
if (!installed) {
  console.log('local-gguf tests skipped: the optional package node-llama-cpp is not installed (npm install node-llama-cpp to run them)');
}

let lm: LocalModels | undefined;
afterAll(async () => {
  await lm?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('local-gguf', () => {
  it('is not listed without a GGUF file, and a request for it is a 404', async () => {
    const plain = await startLocalModels({ ggufPath: join(dir, 'missing.gguf') });
    try {
      expect(plain.models.map((m) => m.id)).not.toContain('local-gguf');
      const r = await postJson(plain.baseUrl, '/chat/completions', { model: 'local-gguf', messages: [{ role: 'user', content: 'hi' }] });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('model_not_found');
    } finally {
      await plain.close();
    }
  });

  it.skipIf(!installed)('loads a generated tiny GGUF and streams from it', { timeout: 120_000 }, async () => {
    lm = await startLocalModels({ ggufPath, ggufContextSize: 256 });
    expect(lm.models.find((m) => m.id === 'local-gguf')).toMatchObject({ kind: 'chat', supports_tools: false });
    const messages = [{ role: 'user', content: 'hello world' }];
    const r = await postJson(lm.baseUrl, '/chat/completions', {
      model: 'local-gguf',
      messages,
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(r.status, r.text).toBe(200);
    const events = sseEvents(r.text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    console.log(`tiny GGUF streamed ${chunks.length} chunks: ${JSON.stringify(text)}`);
    expect(text.length).toBeGreaterThan(0);
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(1);
    expect(chunks.at(-2).choices[0].finish_reason).toMatch(/^(stop|length)$/);
    expect(chunks.at(-1).usage.completion_tokens).toBeGreaterThan(0);

    const plain = await postJson(lm.baseUrl, '/chat/completions', { model: 'local-gguf', messages, max_tokens: 4 });
    expect(plain.status, plain.text).toBe(200);
    expect(plain.json.object).toBe('chat.completion');
  });
});
