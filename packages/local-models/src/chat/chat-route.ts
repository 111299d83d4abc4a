// POST /v1/chat/completions for the local chat models, in OpenAI's exact
// shapes (stream and non-stream, stream_options.include_usage, usage counted
// with the repo's o200k tokenizer).
import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { chatRequestSchema, countChatPromptTokens, countTextTokens, parseWith, SSE_DONE, sseData, type ChatRequest } from '@kbchat/shared';
import { invalidField, LocalModelError } from '../http-util.js';
import { messageText, type ChatEngine } from './chat-engine.js';

export async function handleChat(body: Record<string, unknown>, res: ServerResponse, engine: ChatEngine, signal: AbortSignal): Promise<void> {
  for (const field of ['tools', 'functions'] as const) {
    const value = (body as Record<string, unknown>)[field];
    if (value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)) {
      throw new LocalModelError(
        400,
        `The model '${engine.model}' does not support tools or functions; send the request without '${field}'.`,
        'tools_not_supported',
        'tools',
      );
    }
  }
  const parsed = parseWith(chatRequestSchema, body);
  if (!parsed.ok) throw invalidField(parsed.problem.field, parsed.problem.message);
  const request = parsed.value;
  if ((request.n ?? 1) !== 1) throw invalidField('n', `Invalid 'n': ${engine.model} returns one choice only.`);

  const messages = request.messages.map((m) => ({ role: m.role, text: messageText(m.content) }));
  const generation = await engine.generate(request, messages, signal);
  const meta = { id: `chatcmpl-${randomBytes(12).toString('base64url')}`, created: Math.floor(Date.now() / 1000), model: engine.model };
  const promptTokens = countChatPromptTokens(request.messages as unknown[]);

  if (request.stream) {
    await writeStream(res, request, generation, meta, promptTokens);
    return;
  }
  let content = '';
  for await (const piece of generation.pieces) content += piece;
  const completionTokens = countTextTokens(content);
  const text = JSON.stringify({
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: generation.finishReason() }],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function writeStream(
  res: ServerResponse,
  request: ChatRequest,
  generation: { pieces: AsyncIterable<string>; finishReason(): 'stop' | 'length' },
  meta: { id: string; created: number; model: string },
  promptTokens: number,
): Promise<void> {
  const includeUsage = request.stream_options?.include_usage === true;
  // OpenAI sends "usage": null on every chunk when usage was asked for.
  const chunk = (delta: object, finish: string | null): object => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(sseData(chunk({ role: 'assistant', content: '', refusal: null }, null)));
  let content = '';
  for await (const piece of generation.pieces) {
    if (res.destroyed) return;
    content += piece;
    if (!res.write(sseData(chunk({ content: piece }, null)))) {
      await new Promise((r) => {
        res.once('drain', r);
        res.once('close', r);
      });
    }
  }
  res.write(sseData(chunk({}, generation.finishReason())));
  if (includeUsage) {
    const completionTokens = countTextTokens(content);
    res.write(
      sseData({
        id: meta.id,
        object: 'chat.completion.chunk',
        created: meta.created,
        model: meta.model,
        system_fingerprint: null,
        choices: [],
        usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
      }),
    );
  }
  res.end(SSE_DONE);
}
