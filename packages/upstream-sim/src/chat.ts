// POST /v1/chat/completions: non-streamed and SSE answers, plus the fault models.
import type { ServerResponse } from 'node:http';
import { errorJson, modelNotFound, oaiError, sendJson, send, sleep } from './http.js';
import { baseModel, chatAnswer, chatModel, strictProblem } from './models.js';
import { contentText, fnv1a, tokenCount } from './text.js';
import type { ChatBody, SimConfig } from './types.js';

// Fixed replies, serialised once.
const ERR_503 = errorJson('The server is overloaded or not ready yet.', 'server_error');
const ERR_500 = JSON.stringify({ error: { message: 'internal upstream failure', type: 'server_error' } });
const ERR_400 = errorJson("Invalid 'messages[0].role': unknown role", 'invalid_request_error', null, 'messages');
const ERR_MESSAGES = errorJson("'messages' must be a non-empty array", 'invalid_request_error', null, 'messages');
const ERR_STREAM_OPTIONS = errorJson('Unrecognized request argument supplied: stream_options', 'invalid_request_error', null, 'stream_options');
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };
const ROLE_DELTA = '{"role":"assistant","content":"","refusal":null}';
const DONE = 'data: [DONE]\n\n';

/** Per-server mutable state the chat handler needs. */
export interface ChatState {
  /** sim-flaky requests seen per exact model name since the last reset. */
  flaky: Map<string, number>;
}

export async function chat(res: ServerResponse, body: ChatBody, cfg: SimConfig, state: ChatState): Promise<void> {
  const model = chatModel(baseModel(body.model));
  if (!model) return modelNotFound(res, body.model);
  const kind = model.kind;

  // Fault models that answer before any validation.
  if (kind === 'hang') return; // never answers: the socket stays open until the client or close() ends it
  if (kind === 'flaky') {
    const key = String(body.model);
    const seen = (state.flaky.get(key) ?? 0) + 1;
    state.flaky.set(key, seen);
    if (seen <= model.n) return sendJson(res, 503, ERR_503);
  }
  if (kind === '500') return sendJson(res, 500, ERR_500);
  if (kind === '400') return sendJson(res, 400, ERR_400);

  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return sendJson(res, 400, ERR_MESSAGES);
  if (kind === '503') return sendJson(res, 503, ERR_503);
  if (kind === 'no-stream-options' && body.stream_options !== undefined) return sendJson(res, 400, ERR_STREAM_OPTIONS);
  if (kind === 'slow') {
    await sleep(cfg.slowMs);
    if (res.destroyed) return;
  }
  const problem = kind === 'strict' ? strictProblem(body) : null;
  if (problem && !body.stream) return oaiError(res, 400, problem, 'invalid_request_error', 'invalid_parameter');

  // Same request, same id: lets a test compare replies across runs and paths.
  const id = `chatcmpl-${fnv1a(JSON.stringify(body)).toString(16)}`;
  const created = Math.floor(Date.now() / 1000);
  const answer = problem ? { content: '', parts: [], completionTokens: 0, toolCall: undefined } : chatAnswer(body, model, cfg.tokens);
  let promptTokens = 0;
  for (const m of messages) promptTokens += tokenCount(contentText(m.content));
  const completionTokens = answer.completionTokens;
  const withUsage = kind !== 'nousage';
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const toolCall = answer.toolCall;

  if (!body.stream) {
    const message = !toolCall
      ? { role: 'assistant', content: answer.content }
      : toolCall.style === 'function_call'
        ? { role: 'assistant', content: null, function_call: { name: toolCall.name, arguments: toolCall.arguments } }
        : {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: toolCall.arguments } }],
          };
    const reply: Record<string, unknown> = {
      id,
      object: 'chat.completion',
      created,
      model: body.model,
      system_fingerprint: 'fp_sim',
      choices: [{ index: 0, message, logprobs: null, finish_reason: toolCall?.style ?? 'stop' }],
    };
    if (withUsage) reply.usage = usage;
    return send(res, 200, reply);
  }

  res.writeHead(200, SSE_HEADERS);
  // Each event is `head + delta + tail`: the fixed parts are built once per request, so a
  // streamed word costs one JSON.stringify of the word. Bytes equal JSON.stringify of the
  // full chunk object (same key order as OpenAI: id, object, created, model, ..., usage).
  const includeUsage = withUsage && body.stream_options?.include_usage === true;
  const modelJson = JSON.stringify(body.model);
  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${modelJson},"system_fingerprint":"fp_sim","choices":[{"index":0,"delta":`;
  const tail = `,"logprobs":null,"finish_reason":null}]${includeUsage ? ',"usage":null' : ''}}\n\n`;
  const finishTail = (reason: string) => `,"logprobs":null,"finish_reason":"${reason}"}]${includeUsage ? ',"usage":null' : ''}}\n\n`;
  const delay = cfg.tokenDelayMs;

  res.write(head + ROLE_DELTA + tail);
  if (toolCall) {
    const { id: callId, name, arguments: a, style } = toolCall;
    const legacy = style === 'function_call';
    // The call's name first, then its arguments in two pieces, as providers stream them.
    const opening = legacy
      ? { function_call: { name, arguments: '' } }
      : { tool_calls: [{ index: 0, id: callId, type: 'function', function: { name, arguments: '' } }] };
    res.write(head + JSON.stringify(opening) + tail);
    const half = Math.ceil(a.length / 2);
    for (const part of [a.slice(0, half), a.slice(half)]) {
      if (delay) {
        await sleep(delay);
        if (res.destroyed) return; // client went away: stop producing
      }
      const piece = JSON.stringify(part);
      res.write(head + (legacy ? `{"function_call":{"arguments":${piece}}}` : `{"tool_calls":[{"index":0,"function":{"arguments":${piece}}}]}`) + tail);
    }
    res.write(head + '{}' + finishTail(style));
  } else if (answer.content) {
    const parts = answer.parts;
    for (let i = 0; i < parts.length; i++) {
      if (delay) {
        await sleep(delay);
        if (res.destroyed) return;
      }
      if (kind === 'drop' && i === 3) {
        res.destroy(); // a connection lost mid-stream
        return;
      }
      res.write(head + '{"content":' + JSON.stringify(parts[i]) + '}' + tail);
    }
    res.write(head + '{}' + finishTail('stop'));
  }
  if (includeUsage) {
    res.write(
      `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${modelJson},"system_fingerprint":"fp_sim","choices":[],"usage":${JSON.stringify(usage)}}\n\n`,
    );
  }
  res.end(DONE);
}
