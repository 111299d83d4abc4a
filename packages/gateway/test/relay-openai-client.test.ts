// The gateway as the official `openai` client sees it: chat (plain, streamed,
// with usage), tool calls across two requests, embeddings (float and base64),
// rerank, the model list, pass-through of unknown fields, and billing.
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_MODELS, startTestGateway, type TestGateway } from './helpers.js';
import { collect, makeToken, openaiClient } from './relay-support.js';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

const CHUNK_KEYS = ['id', 'object', 'created', 'model', 'system_fingerprint', 'choices'];
const CHOICE_KEYS = ['index', 'delta', 'logprobs', 'finish_reason'];

const WEATHER_TOOL: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('relay through the official openai client', () => {
  let t: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway();
    client = openaiClient(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('chat', () => {
    it('answers a non-streamed completion with usage', async () => {
      const { data: r, response } = await client.chat.completions
        .create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello gateway' }] })
        .withResponse();
      expect(response.headers.get('x-request-id')).toMatch(/^\d{17}[0-9a-f]{12}$/);
      expect(r.object).toBe('chat.completion');
      expect(r.model).toBe('sim-chat');
      expect(r.choices).toHaveLength(1);
      expect(r.choices[0]!.message.role).toBe('assistant');
      expect(r.choices[0]!.message.content).toMatch(/^Echo: hello gateway hello/);
      expect(r.choices[0]!.finish_reason).toBe('stop');
      expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
      expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
    });

    it('streams role, then content, then finish_reason stop, in the exact chunk shape, without usage when not asked', async () => {
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'stream this please' }];
      const whole = await client.chat.completions.create({ model: 'sim-chat', messages });
      const { chunks, error } = await collect(await client.chat.completions.create({ model: 'sim-chat', messages, stream: true }));
      expect(error).toBeUndefined();
      expect(chunks.length).toBeGreaterThan(3);
      for (const c of chunks) {
        expect(Object.keys(c)).toEqual(CHUNK_KEYS);
        expect(c.object).toBe('chat.completion.chunk');
        expect(c.id).toBe(chunks[0]!.id);
        expect(c.model).toBe('sim-chat');
        expect(c.choices).toHaveLength(1);
        expect(Object.keys(c.choices[0]!)).toEqual(CHOICE_KEYS);
        expect(c.choices[0]!.index).toBe(0);
      }
      const first = chunks[0]!.choices[0]!;
      expect(first.delta).toEqual({ role: 'assistant', content: '', refusal: null });
      expect(first.finish_reason).toBeNull();
      const middle = chunks.slice(1, -1);
      for (const c of middle) {
        expect(Object.keys(c.choices[0]!.delta)).toEqual(['content']);
        expect(c.choices[0]!.finish_reason).toBeNull();
      }
      const last = chunks.at(-1)!.choices[0]!;
      expect(last.delta).toEqual({});
      expect(last.finish_reason).toBe('stop');
      expect(middle.map((c) => c.choices[0]!.delta.content).join('')).toBe(whole.choices[0]!.message.content);
    });

    it('adds a final usage chunk (choices []) when stream_options.include_usage is set', async () => {
      const { chunks, error } = await collect(
        await client.chat.completions.create({
          model: 'sim-chat',
          messages: [{ role: 'user', content: 'count me' }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      expect(error).toBeUndefined();
      const usageChunk = chunks.at(-1)!;
      expect(usageChunk.choices).toEqual([]);
      expect(usageChunk.usage!.prompt_tokens).toBeGreaterThan(0);
      expect(usageChunk.usage!.completion_tokens).toBeGreaterThan(0);
      expect(usageChunk.usage!.total_tokens).toBe(usageChunk.usage!.prompt_tokens + usageChunk.usage!.completion_tokens);
      // As OpenAI does: every other chunk says usage: null, and only one carries usage.
      for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    });

    it('asks the upstream for usage itself on streams, and keeps that chunk from a client that did not ask', async () => {
      const { chunks } = await collect(
        await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'usage is mine' }], stream: true }),
      );
      expect((t.sim.stats().lastBody['sim-chat'] as any).stream_options).toEqual({ include_usage: true });
      expect(chunks.some((c) => c.choices.length === 0 || 'usage' in c)).toBe(false);
    });
  });

  describe('tool calls across two requests', () => {
    const question: OpenAI.Chat.Completions.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris' };

    it('non-streamed: tool_calls, then the tool result answered', async () => {
      const first = await client.chat.completions.create({ model: 'sim-tools', messages: [question], tools: [WEATHER_TOOL], tool_choice: 'auto' });
      const choice = first.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls).toHaveLength(1);
      const call = choice.message.tool_calls![0]!;
      expect(call.type).toBe('function');
      if (call.type !== 'function') throw new Error('expected a function call');
      expect(call.id).toMatch(/^call_/);
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'paris' });

      const second = await client.chat.completions.create({
        model: 'sim-tools',
        tools: [WEATHER_TOOL],
        messages: [question, choice.message, { role: 'tool', tool_call_id: call.id, content: '{"temp_c":21}' }],
      });
      expect(second.choices[0]!.finish_reason).toBe('stop');
      expect(second.choices[0]!.message.content).toBe('Tool result: {"temp_c":21}');
      // The assistant tool_call message and the tool message reached the upstream untouched.
      const sent = t.sim.stats().lastBody['sim-tools'] as any;
      expect(sent.messages[1]).toEqual(JSON.parse(JSON.stringify(choice.message)));
      expect(sent.messages[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: '{"temp_c":21}' });
    });

    it('streamed: tool_call deltas assemble into one call, then the tool result streams back', async () => {
      const { chunks, error } = await collect(
        await client.chat.completions.create({ model: 'sim-tools', messages: [question], tools: [WEATHER_TOOL], stream: true }),
      );
      expect(error).toBeUndefined();
      const calls: Array<{ id?: string; name?: string; args: string }> = [];
      for (const c of chunks) {
        for (const d of c.choices[0]?.delta.tool_calls ?? []) {
          const slot = (calls[d.index] ??= { args: '' });
          if (d.id) slot.id = d.id;
          if (d.function?.name) slot.name = d.function.name;
          slot.args += d.function?.arguments ?? '';
        }
      }
      expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
      expect(calls).toHaveLength(1);
      expect(calls[0]!.name).toBe('get_weather');
      expect(JSON.parse(calls[0]!.args)).toEqual({ city: 'paris' });

      const assistant: OpenAI.Chat.Completions.ChatCompletionMessageParam = {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: calls[0]!.id!, type: 'function', function: { name: calls[0]!.name!, arguments: calls[0]!.args } }],
      };
      const second = await collect(
        await client.chat.completions.create({
          model: 'sim-tools',
          tools: [WEATHER_TOOL],
          stream: true,
          messages: [question, assistant, { role: 'tool', tool_call_id: calls[0]!.id!, content: 'sunny, 21 C' }],
        }),
      );
      expect(second.error).toBeUndefined();
      const text = second.chunks.map((c: Chunk) => c.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe('Tool result: sunny, 21 C');
      expect(second.chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    });
  });

  describe('embeddings, rerank and models', () => {
    const inputs = ['the cat sat on the mat', 'a dog in the fog'];

    it('returns float embeddings, and base64 ones the client decodes to the same vectors', async () => {
      const asFloat = await client.embeddings.create({ model: 'sim-embed-384', input: inputs, encoding_format: 'float' });
      expect(asFloat.object).toBe('list');
      expect(asFloat.data.map((d) => d.index)).toEqual([0, 1]);
      expect(asFloat.usage.prompt_tokens).toBeGreaterThan(0);
      // No encoding_format: the SDK asks for base64 and decodes it itself.
      const decoded = await client.embeddings.create({ model: 'sim-embed-384', input: inputs });
      expect((t.sim.stats().lastBody['sim-embed-384'] as any).encoding_format).toBe('base64');
      for (let i = 0; i < inputs.length; i++) {
        const a = asFloat.data[i]!.embedding;
        const b = decoded.data[i]!.embedding;
        expect(a).toHaveLength(384);
        expect(b).toHaveLength(384);
        expect(Math.max(...a.map((x, j) => Math.abs(x - b[j]!)))).toBeLessThan(1e-6);
      }
    });

    it('passes encoding_format base64 through as a string of 384 little-endian float32 of norm 1', async () => {
      const res = await t.api('/v1/embeddings', { method: 'POST', json: { model: 'sim-embed-384', input: 'base64 please', encoding_format: 'base64' } });
      expect(res.status).toBe(200);
      const body: any = await res.json();
      const b64 = body.data[0].embedding;
      expect(typeof b64).toBe('string');
      const bytes = Uint8Array.from(Buffer.from(b64, 'base64'));
      expect(bytes.byteLength).toBe(384 * 4);
      const v = new Float32Array(bytes.buffer);
      const norm = Math.sqrt(v.reduce((n, x) => n + x * x, 0));
      expect(norm).toBeCloseTo(1, 4);
    });

    it('a large answer (hundreds of KB of numbers) passes intact and is billed from its trailing usage', async () => {
      const many = Array.from({ length: 120 }, (_, i) => `sentence number ${i} about the weather`);
      const res = await t.api('/v1/embeddings', { method: 'POST', json: { model: 'sim-embed-384', input: many, encoding_format: 'float' } });
      const text = await res.text();
      expect(text.length).toBeGreaterThan(64 * 1024);
      const body = JSON.parse(text);
      expect(body.data).toHaveLength(120);
      const requestId = res.headers.get('x-request-id');
      const log = await (await t.api(`/api/logs/${requestId}`)).json();
      expect(log.usage_source).toBe('upstream');
      expect(log.prompt_tokens).toBe(body.usage.prompt_tokens);
    });

    it('reranks documents by relevance', async () => {
      const res = await t.api('/v1/rerank', {
        method: 'POST',
        json: {
          model: 'sim-rerank',
          query: 'green tea health',
          documents: ['coffee is bitter', 'green tea is good for health', { text: 'tea time' }],
          top_n: 2,
        },
      });
      expect(res.status).toBe(200);
      const body: any = await res.json();
      expect(body.results).toHaveLength(2);
      expect(body.results[0]).toEqual({ index: 1, relevance_score: 1 });
      expect(body.results[1].index).toBe(2);
      expect(body.results[0].relevance_score).toBeGreaterThan(body.results[1].relevance_score);
    });

    it("lists the channel's models, and only the allowed ones for a restricted token", async () => {
      const all = await client.models.list();
      expect(all.data.map((m) => m.id).sort()).toEqual([...SIM_MODELS].sort());
      for (const m of all.data) expect(m.object).toBe('model');
      const key = await makeToken(t, { name: 'two models', models: ['sim-chat', 'sim-rerank'] });
      const some = await openaiClient(t, key).models.list();
      expect(some.data.map((m) => m.id).sort()).toEqual(['sim-chat', 'sim-rerank']);
    });
  });

  describe('pass-through and billing', () => {
    it('sends unknown and untyped fields upstream untouched', async () => {
      const body = {
        model: 'sim-chat',
        messages: [{ role: 'user', content: 'keep my fields', name: 'alice', x_custom: { deep: [1, 'two', null] } }],
        logit_bias: { '50256': -100 },
        user: 'end-user-42',
        metadata: { team: 'search', run: '7' },
        seed: 7,
        top_p: 0.9,
        response_format: { type: 'text' },
        some_future_field: { nested: { ok: true } },
      };
      const res = await t.api('/v1/chat/completions', { method: 'POST', json: body });
      expect(res.status).toBe(200);
      expect(t.sim.stats().lastBody['sim-chat']).toEqual(body);

      const streamed = await t.api('/v1/chat/completions', { method: 'POST', json: { ...body, stream: true } });
      await streamed.text();
      // On streams the gateway only adds stream_options (to learn usage).
      expect(t.sim.stats().lastBody['sim-chat']).toEqual({ ...body, stream: true, stream_options: { include_usage: true } });
    });

    it('charges exactly ceil((prompt*in + completion*out) / 1e6) micro-units from the balance', async () => {
      const { accountsStore, ledger, config, logsStore } = t.gw.services;
      const root = (await accountsStore.userByName('root'))!;
      const balance = async () => {
        await ledger.flush();
        return Number((await accountsStore.userById(root.id))!.balance);
      };
      const before = await balance();
      const { data: r, response } = await client.chat.completions
        .create({ model: 'sim-chat', messages: [{ role: 'user', content: 'what does this cost' }] })
        .withResponse();
      const after = await balance();
      const inPrice = config.defaultInputPrice * 1_000_000;
      const outPrice = config.defaultOutputPrice * 1_000_000;
      const expected = Math.ceil((r.usage!.prompt_tokens * inPrice + r.usage!.completion_tokens * outPrice) / 1_000_000);
      expect(expected).toBeGreaterThan(0);
      expect(before - after).toBe(expected);

      await ledger.flush();
      const [row] = await logsStore.list({ requestId: response.headers.get('x-request-id')! }, 0, 10);
      expect(row).toMatchObject({ model: 'sim-chat', status: 200, usage_source: 'upstream', attempts: 1 });
      expect(Number(row!.cost)).toBe(expected);
      expect(Number(row!.prompt_tokens)).toBe(r.usage!.prompt_tokens);
      expect(Number(row!.completion_tokens)).toBe(r.usage!.completion_tokens);
    });
  });
});
