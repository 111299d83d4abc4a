import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatQuotesForPrompt, NOT_FOUND_ANSWER, startLocalModels, type LocalModels } from '@kbchat/local-models';
import { postJson, sseEvents } from './helpers.js';

let lm: LocalModels;
beforeAll(async () => {
  lm = await startLocalModels({ warmup: true });
});
afterAll(async () => {
  await lm?.close();
});

const QUOTES = [
  { id: 'returns-1', sourceName: 'returns.md', text: 'Refunds are issued within 14 days of the return being received. Shipping costs are not refunded.' },
  { id: 'hours-2', sourceName: 'hours.md', text: 'Our office is open Monday to Friday from 9am to 5pm. We are closed on public holidays.' },
  { id: 'warranty-3', text: 'The warranty covers manufacturing defects for two years. The cafeteria serves lunch at noon.' },
];

async function ask(messages: object[], extra: object = {}) {
  return postJson(lm.baseUrl, '/chat/completions', { model: 'local-extractive', messages, ...extra });
}

describe('local-extractive over HTTP', () => {
  it('answers from the supplied quotes with their markers, leaving out unrelated ones', async () => {
    const r = await ask([{ role: 'user', content: formatQuotesForPrompt(QUOTES, 'How long does a refund take?') }]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ object: 'chat.completion', model: 'local-extractive', system_fingerprint: null });
    const answer: string = r.json.choices[0].message.content;
    expect(r.json.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant' } });
    expect(answer).toContain('Refunds are issued within 14 days of the return being received. [returns-1]');
    expect(answer).not.toContain('office');
    expect(answer).not.toContain('cafeteria');
    const { prompt_tokens, completion_tokens, total_tokens } = r.json.usage;
    expect(prompt_tokens).toBeGreaterThan(50);
    expect(completion_tokens).toBeGreaterThan(5);
    expect(total_tokens).toBe(prompt_tokens + completion_tokens);
  });

  it('matches a paraphrased question and cites a numbered quote', async () => {
    const r = await ask([
      {
        role: 'user',
        content: formatQuotesForPrompt(
          QUOTES.map(({ text }) => ({ text })),
          'When can I visit the office?',
        ),
      },
    ]);
    const answer: string = r.json.choices[0].message.content;
    expect(answer).toContain('Our office is open Monday to Friday from 9am to 5pm. [2]');
    expect(answer).not.toContain('Refunds');
  });

  it('refuses plainly when nothing in the knowledge fits, or there is no knowledge', async () => {
    const r = await ask([{ role: 'user', content: formatQuotesForPrompt(QUOTES, 'What is the capital of France?') }]);
    expect(r.json.choices[0].message.content).toBe(NOT_FOUND_ANSWER);
    const none = await ask([{ role: 'user', content: 'How long does a refund take?' }]);
    expect(none.json.choices[0].message.content).toBe(NOT_FOUND_ANSWER);
  });

  it('reads FastGPT-style <Data> in the system prompt with [n] quotes and a labelled question', async () => {
    const system =
      'Use the content in <Data></Data> as your knowledge.\n<Data>\n[1] Parking is free for visitors in lot B.\n[2] The library closes at 8pm on weekdays.\n</Data>';
    const r = await ask([
      { role: 'system', content: system },
      { role: 'user', content: 'Answer briefly.\nQuestion: """Where can visitors park?"""' },
    ]);
    expect(r.json.choices[0].message.content).toBe('Parking is free for visitors in lot B. [1]');
  });

  it('reads <QA> pairs, answering with the answer of the matching question', async () => {
    const content =
      '<Reference>\n<QA><Q>How do I reset my password?</Q><A>Open Settings, choose Security and press Reset.</A></QA>\n' +
      '<QA><Q>Which payment methods are accepted?</Q><A>Visa, Mastercard and PayPal.</A></QA>\n</Reference>\nQuestion: how can I reset my password';
    const r = await ask([{ role: 'user', content }]);
    expect(r.json.choices[0].message.content).toBe('Open Settings, choose Security and press Reset. [1]');
  });

  it('streams OpenAI chunks, then a usage chunk when asked, then [DONE]', async () => {
    const r = await ask([{ role: 'user', content: formatQuotesForPrompt(QUOTES, 'How long does a refund take?') }], {
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(r.status).toBe(200);
    const events = sseEvents(r.text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    const usageChunk = chunks.at(-1);
    const contentChunks = chunks.slice(0, -1);
    expect(contentChunks.length).toBeGreaterThanOrEqual(4); // role, at least two pieces, finish
    for (const c of contentChunks) {
      expect(Object.keys(c)).toEqual(['id', 'object', 'created', 'model', 'system_fingerprint', 'choices', 'usage']);
      expect(c).toMatchObject({ id: chunks[0].id, object: 'chat.completion.chunk', model: 'local-extractive', system_fingerprint: null, usage: null });
      expect(c.choices).toHaveLength(1);
      expect(c.choices[0]).toMatchObject({ index: 0, logprobs: null });
    }
    expect(contentChunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' });
    expect(contentChunks.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(contentChunks.slice(0, -1).every((c: any) => c.choices[0].finish_reason === null)).toBe(true);
    const text = contentChunks.map((c: any) => c.choices[0].delta.content ?? '').join('');
    expect(text).toContain('Refunds are issued within 14 days of the return being received. [returns-1]');
    expect(usageChunk).toMatchObject({ object: 'chat.completion.chunk', choices: [] });
    expect(usageChunk.usage.total_tokens).toBe(usageChunk.usage.prompt_tokens + usageChunk.usage.completion_tokens);
    expect(usageChunk.usage.completion_tokens).toBeGreaterThan(5);
  });

  it('streams without a usage chunk or usage fields when not asked', async () => {
    const r = await ask([{ role: 'user', content: formatQuotesForPrompt(QUOTES, 'How long does a refund take?') }], { stream: true });
    const chunks = sseEvents(r.text)
      .slice(0, -1)
      .map((e) => JSON.parse(e));
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  it('rejects tools and functions with a 400 on param tools', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const r = await ask(messages, { tools });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', param: 'tools', code: 'tools_not_supported' });
    expect(r.json.error.message).toMatch(/does not support tools/);
    const f = await ask(messages, { functions: [{ name: 'lookup' }] });
    expect(f.status).toBe(400);
    expect(f.json.error.param).toBe('tools');
  });

  it('answers unknown models with 404 model_not_found and bad bodies with 400 naming the field', async () => {
    const r = await postJson(lm.baseUrl, '/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    const noMessages = await ask(undefined as unknown as object[]);
    expect(noMessages.status).toBe(400);
    expect(noMessages.json.error.param).toBe('messages');
    const badRole = await ask([{ role: 'wizard', content: 'hi' }]);
    expect(badRole.json.error.param).toBe('messages[0].role');
  });
});
