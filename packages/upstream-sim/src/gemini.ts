// Google's Gemini API (v1beta, written from its public reference):
// POST /v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse,
// :embedContent and :batchEmbedContents (gemini-embed.ts), the key in
// x-goog-api-key or ?key=, Google's error envelope {error:{code,message,status}},
// the checks Gemini makes (unknown fields refused, roles user/model), function
// calls, usageMetadata, and safety blocks.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { googleError, keyProblem, readBody, sleep } from './http.js';
import { callFirst, echoAnswer, textAnswer, type Answer } from './models.js';
import { batchEmbedContents, embedContent, EMBED_MODEL } from './gemini-embed.js';
import { limitAnswer } from './limits.js';
import { fnv1a, tokenCount } from './text.js';
import type { ChatMessage, SimConfig } from './types.js';

/** gemini-sim (echo), -tools, safety blocks and the fault models; embedding models are in gemini-embed.ts. */
const GEMINI = /^gemini-sim(?:-(tools|safety|safety-late|429|503|400|500|drop|hang))?$/;
export const GEMINI_MODELS = [
  'gemini-sim',
  'gemini-sim-tools',
  'gemini-sim-safety',
  'gemini-sim-safety-late',
  'gemini-sim-429',
  'gemini-sim-503',
  'gemini-sim-400',
  'gemini-sim-500',
  'gemini-sim-drop',
  'gemini-sim-hang',
  'gemini-sim-embed-768',
];

const FIELDS = new Set(['contents', 'systemInstruction', 'generationConfig', 'tools', 'toolConfig', 'safetySettings', 'cachedContent']);
const CONFIG_FIELDS = new Set([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'thinkingConfig',
  'responseModalities',
]);
const PART_FIELDS = new Set(['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'thought', 'thoughtSignature']);
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };
const BLOCKED_RATINGS = [
  { category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
  { category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', probability: 'NEGLIGIBLE' },
];

export interface GeminiState {
  count(req: IncomingMessage, path: string, body: unknown, model: unknown): void;
}

const notFound = (res: ServerResponse, model: string, method: string) =>
  googleError(
    res,
    404,
    `models/${model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
  );

type Part = Record<string, any>;
const textOf = (parts: Part[] | undefined): string =>
  (parts ?? [])
    .filter((p) => typeof p?.text === 'string' && !p.thought)
    .map((p) => p.text)
    .join(' ');

/** The first problem Gemini would report for a generateContent body, in its wording. */
function problemOf(body: any): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'Invalid JSON payload received. Expected an object.';
  for (const k of Object.keys(body)) if (!FIELDS.has(k)) return `Invalid JSON payload received. Unknown name "${k}": Cannot find field.`;
  for (const k of Object.keys(body.generationConfig ?? {})) {
    if (!CONFIG_FIELDS.has(k)) return `Invalid JSON payload received. Unknown name "${k}" at 'generation_config': Cannot find field.`;
  }
  const t = body.generationConfig?.temperature;
  if (t !== undefined && (typeof t !== 'number' || t < 0 || t > 2))
    return '* GenerateContentRequest.generation_config.temperature: must be in the range [0.0, 2.0]\n';
  if ((body.generationConfig?.stopSequences?.length ?? 0) > 5)
    return '* GenerateContentRequest.generation_config.stop_sequences: at most 5 stop sequences are allowed\n';
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified\n';
  for (let i = 0; i < body.contents.length; i++) {
    const c = body.contents[i];
    if (c?.role !== undefined && !['user', 'model', 'function'].includes(c.role)) return 'Please use a valid role: user, model.';
    if (!Array.isArray(c?.parts) || c.parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`;
    for (let j = 0; j < c.parts.length; j++) {
      const p = c.parts[j];
      for (const k of Object.keys(p ?? {}))
        if (!PART_FIELDS.has(k)) return `Invalid JSON payload received. Unknown name "${k}" at 'contents[${i}].parts[${j}]': Cannot find field.`;
      if (
        p.inlineData &&
        (typeof p.inlineData.mimeType !== 'string' || typeof p.inlineData.data !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(p.inlineData.data))
      ) {
        return `* GenerateContentRequest.contents[${i}].parts[${j}].inline_data: mime_type and base64 data are required\n`;
      }
      if (p.functionResponse && (typeof p.functionResponse.name !== 'string' || typeof p.functionResponse.response !== 'object')) {
        return `* GenerateContentRequest.contents[${i}].parts[${j}].function_response: name and response (an object) are required\n`;
      }
    }
  }
  for (const tool of body.tools ?? []) {
    for (const [j, fn] of (tool?.functionDeclarations ?? []).entries()) {
      if (typeof fn?.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(fn.name)) {
        return `* GenerateContentRequest.tools[0].function_declarations[${j}].name: Invalid function name.\n`;
      }
      if (fn.parameters && JSON.stringify(fn.parameters).includes('"additionalProperties"')) {
        return `Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[${j}].parameters': Cannot find field.`;
      }
    }
  }
  return null;
}

/** The conversation as the shared answer code reads it: function responses become role "tool". */
function chatMessages(contents: any[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const c of contents) {
    for (const p of c.parts) {
      const r = p.functionResponse?.response;
      if (!r) continue;
      // A response whose only value is a string is read as that string, else as its JSON.
      const values = Object.values(r);
      out.push({ role: 'tool', content: values.length === 1 && typeof values[0] === 'string' ? values[0] : JSON.stringify(r) });
    }
    out.push({ role: c.role === 'model' ? 'assistant' : 'user', content: textOf(c.parts) });
  }
  return out;
}

function answerOf(body: any, kind: string, tokens: number): Answer {
  const msgs = chatMessages(body.contents);
  const fns: any[] = (body.tools ?? []).flatMap((t: any) => t?.functionDeclarations ?? []);
  const cfg = body.toolConfig?.functionCallingConfig;
  if (kind !== 'tools' || !fns.length || cfg?.mode === 'NONE') return echoAnswer(msgs, tokens);
  const result = [...msgs].reverse().find((m) => m.role === 'tool');
  if (result && cfg?.mode !== 'ANY') return textAnswer(`Tool result: ${result.content}`);
  const allowed: string[] | undefined = cfg?.allowedFunctionNames;
  const fn = (allowed?.length ? fns.find((f) => f.name === allowed[0]) : undefined) ?? fns[0];
  return callFirst({ name: fn.name, parameters: fn.parameters }, msgs, 'tool_calls');
}

/** Routes POST /v1beta/models/{model}:{method} (and /v1/...). */
export async function gemini(req: IncomingMessage, res: ServerResponse, path: string, query: string, cfg: SimConfig, state: GeminiState): Promise<void> {
  const key = req.headers['x-goog-api-key'] ?? new URLSearchParams(query).get('key') ?? undefined;
  const keyIssue = keyProblem(cfg, typeof key === 'string' ? key : undefined);
  if (keyIssue === 'missing') {
    return googleError(
      res,
      403,
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    );
  }
  if (keyIssue === 'quota') return googleError(res, 429, 'You exceeded your current quota, please check your plan and billing details.');
  if (keyIssue === 'wrong') {
    return googleError(res, 400, 'API key not valid. Please pass a valid API key.', [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ]);
  }
  const name = decodeURIComponent(path.slice(path.indexOf('/models/') + '/models/'.length));
  const colon = name.lastIndexOf(':');
  const model = colon < 0 ? name : name.slice(0, colon);
  const method = colon < 0 ? '' : name.slice(colon + 1);
  let body: any;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    return googleError(res, 400, 'Invalid JSON payload received. Unexpected token.');
  }
  state.count(req, path, body, model);
  if (method === 'embedContent' || method === 'batchEmbedContents') {
    if (!EMBED_MODEL.test(model)) return notFound(res, model, method);
    return method === 'embedContent' ? embedContent(res, model, body) : batchEmbedContents(res, model, body);
  }
  if (method !== 'generateContent' && method !== 'streamGenerateContent') return googleError(res, 404, `Method not found: ${method}`);
  const m = GEMINI.exec(model);
  if (!m) return notFound(res, model, method);
  const kind = m[1] ?? 'chat';
  if (kind === 'hang') return;
  const problem = problemOf(body);
  if (problem) return googleError(res, 400, problem);
  if (kind === '429') return googleError(res, 429, 'Resource has been exhausted (e.g. check quota).');
  if (kind === '503') return googleError(res, 503, 'The model is overloaded. Please try again later.');
  if (kind === '400') return googleError(res, 400, 'Request contains an invalid argument.');
  if (kind === '500')
    return googleError(res, 500, 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting');
  await generate(res, model, kind, body, method === 'streamGenerateContent', new URLSearchParams(query).get('alt') === 'sse', cfg);
}

async function generate(res: ServerResponse, model: string, kind: string, body: any, stream: boolean, sse: boolean, cfg: SimConfig): Promise<void> {
  let prompt = tokenCount(textOf(body.systemInstruction?.parts));
  for (const c of body.contents) {
    prompt += tokenCount(textOf(c.parts));
    for (const p of c.parts) if (p.functionResponse || p.functionCall) prompt += tokenCount(JSON.stringify(p.functionResponse ?? p.functionCall));
  }
  const responseId = `sim${fnv1a(JSON.stringify(body)).toString(16)}`;
  const head = { modelVersion: model, responseId };
  const gc = body.generationConfig ?? {};
  const answer = answerOf(body, kind, cfg.tokens);
  const call = answer.toolCall;
  const limited = limitAnswer(answer.parts, answer.completionTokens, gc.maxOutputTokens, gc.stopSequences ?? []);
  const output = call ? answer.completionTokens : limited.outputTokens;
  const usage = { promptTokenCount: prompt, candidatesTokenCount: output, totalTokenCount: prompt + output };
  const promptOnly = { promptTokenCount: prompt, totalTokenCount: prompt };
  // Gemini says STOP for function calls and for stop sequences alike.
  const finishReason = limited.cut === 'max_tokens' && !call ? 'MAX_TOKENS' : 'STOP';
  const candidate = (parts: Part[] | null, finish?: string, extra: Record<string, unknown> = {}) => ({
    ...(parts ? { content: { parts, role: 'model' } } : {}),
    ...(finish ? { finishReason: finish } : {}),
    index: 0,
    ...extra,
  });
  const callPart = call ? { functionCall: { name: call.name, args: JSON.parse(call.arguments) } } : null;

  if (!stream) {
    let reply: object;
    if (kind === 'safety') reply = { promptFeedback: { blockReason: 'SAFETY', safetyRatings: BLOCKED_RATINGS }, usageMetadata: promptOnly, ...head };
    else if (kind === 'safety-late')
      reply = { candidates: [candidate(null, 'SAFETY', { safetyRatings: BLOCKED_RATINGS })], usageMetadata: promptOnly, ...head };
    else reply = { candidates: [candidate(callPart ? [callPart] : [{ text: limited.text }], finishReason)], usageMetadata: usage, ...head };
    const data = JSON.stringify(reply);
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(data) });
    res.end(data);
    return;
  }
  // Gemini's SSE frames end in CRLF CRLF; without alt=sse it streams one JSON array.
  let first = true;
  const send = (obj: object) => {
    const json = JSON.stringify(obj);
    if (sse) res.write(`data: ${json}\r\n\r\n`);
    else res.write(`${first ? '[' : ',\r\n'}${json}`);
    first = false;
  };
  res.writeHead(200, sse ? SSE_HEADERS : { 'content-type': 'application/json; charset=UTF-8' });
  const close = (): void => {
    res.end(sse ? '' : ']');
  };
  if (kind === 'safety') {
    send({ promptFeedback: { blockReason: 'SAFETY', safetyRatings: BLOCKED_RATINGS }, usageMetadata: promptOnly, ...head });
    return close();
  }
  if (callPart) {
    send({ candidates: [candidate([callPart], 'STOP')], usageMetadata: usage, ...head });
    return close();
  }
  // Text in pieces of four words; the last piece carries the finish reason and the full usage.
  const pieces: string[] = [];
  for (let i = 0; i < limited.parts.length; i += 4) pieces.push(limited.parts.slice(i, i + 4).join(''));
  if (pieces.length === 0) pieces.push('');
  for (let i = 0; i < pieces.length; i++) {
    if (cfg.tokenDelayMs) {
      await sleep(cfg.tokenDelayMs);
      if (res.destroyed) return;
    }
    if (i === 2 && kind === 'drop') {
      res.destroy();
      return;
    }
    if (i === 2 && kind === 'safety-late') {
      send({ candidates: [candidate(null, 'SAFETY', { safetyRatings: BLOCKED_RATINGS })], usageMetadata: promptOnly, ...head });
      return close();
    }
    const last = i === pieces.length - 1;
    send({ candidates: [candidate([{ text: pieces[i] }], last ? finishReason : undefined)], usageMetadata: last ? usage : promptOnly, ...head });
  }
  close();
}
