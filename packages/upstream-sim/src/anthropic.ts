// POST /v1/messages in the shape of Anthropic's Messages API (written from its
// public reference): x-api-key and anthropic-version headers, the request
// checks Anthropic makes (max_tokens required, extra fields refused, roles,
// tool_use/tool_result pairing), answers and SSE events, prompt-cache usage,
// and the error envelope {"type":"error","error":{type,message},"request_id"}.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyProblem, readBody, sleep } from './http.js';
import { callFirst, echoAnswer, textAnswer, type Answer } from './models.js';
import { limitAnswer } from './limits.js';
import { fnv1a, tokenCount } from './text.js';
import type { ChatMessage, SimConfig } from './types.js';

/** claude-sim (echo), -tools, and the fault models. */
const CLAUDE = /^claude-sim(?:-(tools|529|429|500|drop|hang|stream-error))?$/;
export const ANTHROPIC_MODELS = [
  'claude-sim',
  'claude-sim-tools',
  'claude-sim-529',
  'claude-sim-429',
  'claude-sim-500',
  'claude-sim-drop',
  'claude-sim-hang',
  'claude-sim-stream-error',
];

const FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_k',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
]);
const BLOCKS = new Set(['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);
const MEDIA = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' };

export interface AnthropicState {
  /** Prefixes (hashes) written to the prompt cache since the last reset. */
  promptCache: Set<string>;
  count(req: IncomingMessage, path: string, body: unknown, model: unknown): void;
}

type Block = Record<string, any>;
interface Problem {
  status: number;
  type: string;
  message: string;
}

const bad = (message: string): Problem => ({ status: 400, type: 'invalid_request_error', message });

function sendError(res: ServerResponse, p: Problem, requestId: string, headers: Record<string, string> = {}): void {
  const data = JSON.stringify({ type: 'error', error: { type: p.type, message: p.message }, request_id: requestId });
  res.writeHead(p.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), 'request-id': requestId, ...headers });
  res.end(data);
}

const blocksOf = (content: unknown): Block[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : []);
const textOf = (content: unknown): string =>
  blocksOf(content)
    .filter((b) => b?.type === 'text')
    .map((b) => String(b.text ?? ''))
    .join(' ');

/** The first problem Anthropic would report for this body, in its wording; null when none. */
function problemOf(body: any): Problem | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return bad('Input should be an object');
  for (const k of Object.keys(body)) if (!FIELDS.has(k)) return bad(`${k}: Extra inputs are not permitted`);
  if (typeof body.model !== 'string') return bad('model: Field required');
  if (body.max_tokens === undefined) return bad('max_tokens: Field required');
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return bad('max_tokens: Input should be an integer greater than or equal to 1');
  if (body.temperature !== undefined && (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1)) {
    return bad('temperature: Input should be a number between 0 and 1');
  }
  if (body.stop_sequences !== undefined && (!Array.isArray(body.stop_sequences) || body.stop_sequences.some((s: unknown) => typeof s !== 'string'))) {
    return bad('stop_sequences: Input should be a valid list of strings');
  }
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system))
    return bad('system: Input should be a valid string or list of text blocks');
  if (!Array.isArray(body.messages) || body.messages.length === 0) return bad('messages: at least one message is required');
  const tools: any[] = body.tools ?? [];
  if (!Array.isArray(tools)) return bad('tools: Input should be a valid list');
  for (let i = 0; i < tools.length; i++) {
    if (typeof tools[i]?.name !== 'string') return bad(`tools.${i}.name: Field required`);
    if (!tools[i].type && (typeof tools[i].input_schema !== 'object' || !tools[i].input_schema)) return bad(`tools.${i}.input_schema: Field required`);
  }
  const choice = body.tool_choice;
  if (choice !== undefined && !['auto', 'any', 'tool', 'none'].includes(choice?.type))
    return bad("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
  if (choice?.type === 'tool' && !tools.some((t) => t.name === choice.name)) return bad(`tool_choice.name: Tool '${choice.name}' not found in tools`);
  for (let i = 0; i < body.messages.length; i++) {
    const m = body.messages[i];
    if (m?.role === 'system') {
      return bad('messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.');
    }
    if (m?.role !== 'user' && m?.role !== 'assistant') return bad(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (typeof m.content !== 'string' && !Array.isArray(m.content))
      return bad(`messages.${i}.content: Input should be a valid string or list of content blocks`);
    const blocks = blocksOf(m.content);
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      const at = `messages.${i}.content.${j}`;
      if (!BLOCKS.has(b?.type)) return bad(`${at}.type: Input tag '${b?.type}' found using 'type' does not match any of the expected tags`);
      if (b.type === 'text' && typeof b.text !== 'string') return bad(`${at}.text: Field required`);
      if (b.type === 'text' && !b.text) return bad('messages: text content blocks must be non-empty');
      if (b.type === 'image') {
        const s = b.source;
        if (s?.type === 'base64' && !MEDIA.has(s.media_type))
          return bad(`${at}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`);
        if (s?.type === 'base64' && (typeof s.data !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(s.data)))
          return bad(`${at}.source.base64.data: invalid base64 data`);
        if (s?.type === 'url' && !/^https?:\/\//.test(String(s.url))) return bad(`${at}.source.url.url: must be an http or https URL`);
        if (s?.type !== 'base64' && s?.type !== 'url')
          return bad(`${at}.source: Input tag '${s?.type}' found using 'type' does not match any of the expected tags`);
      }
      if (b.type === 'tool_use' && m.role !== 'assistant') return bad(`${at}: tool_use blocks may only appear in assistant messages`);
      if (b.type === 'tool_result') {
        if (m.role !== 'user') return bad(`${at}: tool_result blocks may only appear in user messages`);
        const before = i > 0 ? blocksOf(body.messages[i - 1].content) : [];
        if (!before.some((p) => p?.type === 'tool_use' && p.id === b.tool_use_id)) {
          return bad(
            `${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
        }
      }
    }
    const next = body.messages[i + 1];
    for (const b of blocks) {
      if (b.type !== 'tool_use' || !next) continue;
      if (!blocksOf(next.content).some((p) => p?.type === 'tool_result' && p.tool_use_id === b.id)) {
        return bad(
          `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${b.id}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
    }
  }
  return null;
}

/** The conversation as the shared answer code reads it: tool results become role "tool". */
function chatMessages(messages: any[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const blocks = blocksOf(m.content);
    for (const b of blocks) if (b?.type === 'tool_result') out.push({ role: 'tool', content: typeof b.content === 'string' ? b.content : textOf(b.content) });
    out.push({ role: m.role, content: textOf(m.content) });
  }
  return out;
}

interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/**
 * Input tokens, split like Anthropic's: the prefix up to the last block with
 * `cache_control` (tools, then system, then messages) is written to the cache
 * the first time and read from it afterwards; input_tokens is the rest.
 * (No 1,024-token minimum here, so that small tests can see caching.)
 */
function inputUsage(body: any, cache: Set<string>): Omit<Usage, 'output_tokens'> {
  const segments: { tokens: number; marked: boolean; key: unknown }[] = [];
  for (const t of body.tools ?? []) segments.push({ tokens: tokenCount(`${t.name} ${t.description ?? ''}`), marked: !!t.cache_control, key: t });
  for (const b of blocksOf(body.system)) segments.push({ tokens: tokenCount(b.text), marked: !!b.cache_control, key: b });
  for (const m of body.messages) {
    for (const b of blocksOf(m.content)) {
      const text =
        b.type === 'tool_use'
          ? JSON.stringify(b.input ?? {})
          : b.type === 'tool_result'
            ? typeof b.content === 'string'
              ? b.content
              : textOf(b.content)
            : b.text;
      segments.push({ tokens: tokenCount(text ?? ''), marked: !!b.cache_control, key: b });
    }
  }
  let total = 0;
  let last = -1;
  for (let i = 0; i < segments.length; i++) {
    total += segments[i].tokens;
    if (segments[i].marked) last = i;
  }
  let prefix = 0;
  for (let i = 0; i <= last; i++) prefix += segments[i].tokens;
  const usage = { input_tokens: total - prefix, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (last >= 0) {
    const key = `${body.model}:${fnv1a(JSON.stringify(segments.slice(0, last + 1).map((s) => s.key))).toString(16)}`;
    if (cache.has(key)) usage.cache_read_input_tokens = prefix;
    else {
      usage.cache_creation_input_tokens = prefix;
      cache.add(key);
    }
  }
  return usage;
}

const STOP_REASON = { max_tokens: 'max_tokens', stop_sequence: 'stop_sequence' } as const;

export async function anthropic(req: IncomingMessage, res: ServerResponse, cfg: SimConfig, state: AnthropicState): Promise<void> {
  const requestId = `req_sim_${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0')}`;
  // The key in x-api-key (the reference's header), or as a bearer token (what current SDKs send).
  const auth = req.headers.authorization;
  const key = req.headers['x-api-key'] ?? (auth?.startsWith('Bearer ') ? auth.slice(7) : undefined);
  const keyIssue = keyProblem(cfg, typeof key === 'string' ? key : undefined);
  if (keyIssue === 'quota') {
    const message = 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.';
    return sendError(res, { status: 400, type: 'invalid_request_error', message }, requestId);
  }
  if (keyIssue) return sendError(res, { status: 401, type: 'authentication_error', message: 'invalid x-api-key' }, requestId);
  if (!req.headers['anthropic-version']) return sendError(res, bad('anthropic-version: header is required'), requestId);
  let body: any;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    return sendError(res, bad('There was an issue with your request body: it is not valid JSON'), requestId);
  }
  state.count(req, '/v1/messages', body, body?.model);
  const problem = problemOf(body);
  if (problem) return sendError(res, problem, requestId);
  const m = CLAUDE.exec(body.model);
  if (!m) return sendError(res, { status: 404, type: 'not_found_error', message: `model: ${body.model}` }, requestId);
  const kind = m[1] ?? 'chat';
  if (kind === 'hang') return; // the socket stays open until the client or close() ends it
  if (kind === '529') return sendError(res, { status: 529, type: 'overloaded_error', message: 'Overloaded' }, requestId);
  if (kind === '429') {
    const message = "This request would exceed your organization's rate limit of 50 requests per minute (sim). Please retry later.";
    return sendError(res, { status: 429, type: 'rate_limit_error', message }, requestId, { 'retry-after': String(cfg.retryAfterSeconds || 1) });
  }
  if (kind === '500') return sendError(res, { status: 500, type: 'api_error', message: 'Internal server error' }, requestId);

  const msgs = chatMessages(body.messages);
  const tools: any[] = body.tools ?? [];
  const choice = body.tool_choice?.type ?? 'auto';
  let answer: Answer;
  let preface = '';
  if (kind === 'tools' && tools.length && choice !== 'none') {
    const result = [...msgs].reverse().find((x) => x.role === 'tool');
    if (result) answer = textAnswer(`Tool result: ${result.content}`);
    else {
      const tool = (choice === 'tool' ? tools.find((t) => t.name === body.tool_choice.name) : tools[0]) ?? tools[0];
      answer = callFirst({ name: tool.name, parameters: tool.input_schema }, msgs, 'tool_calls');
      // Like Claude: a word before the call, unless the call is forced.
      if (choice === 'auto') preface = `I'll call ${tool.name}.`;
    }
  } else answer = echoAnswer(msgs, cfg.tokens);

  const call = answer.toolCall;
  const limited = call ? null : limitAnswer(answer.parts, answer.completionTokens, body.max_tokens, body.stop_sequences ?? []);
  const usage: Usage = {
    ...inputUsage(body, state.promptCache),
    output_tokens: call ? answer.completionTokens + tokenCount(preface) : limited!.outputTokens,
  };
  const id = `msg_sim${fnv1a(JSON.stringify(body)).toString(16)}`;
  const toolId = call ? call.id.replace(/^call_/, 'toolu_') : '';
  const input = call ? JSON.parse(call.arguments) : undefined;
  const stopReason = call ? 'tool_use' : limited!.cut ? STOP_REASON[limited!.cut] : 'end_turn';
  const stopSequence = limited?.stopSequence ?? null;

  if (body.stream !== true) {
    const content: Block[] = [];
    if (preface) content.push({ type: 'text', text: preface });
    if (call) content.push({ type: 'tool_use', id: toolId, name: call.name, input });
    else content.push({ type: 'text', text: limited!.text });
    const data = JSON.stringify({
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: stopSequence,
      usage,
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), 'request-id': requestId });
    res.end(data);
    return;
  }

  res.writeHead(200, { ...SSE_HEADERS, 'request-id': requestId });
  const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const pause = async (): Promise<boolean> => {
    if (cfg.tokenDelayMs) await sleep(cfg.tokenDelayMs);
    return !res.destroyed;
  };
  const startUsage = { ...usage, output_tokens: 1 };
  send('message_start', {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage },
  });
  let index = 0;
  const textBlock = async (pieces: string[]): Promise<boolean> => {
    send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    if (index === 0) send('ping', { type: 'ping' });
    for (let i = 0; i < pieces.length; i++) {
      if (!(await pause())) return false;
      if (i === 3 && kind === 'drop') {
        res.destroy(); // a connection lost mid-stream
        return false;
      }
      if (i === 3 && kind === 'stream-error') {
        // Anthropic reports overloads that happen mid-answer as an error event in the 200 stream.
        send('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
        res.end();
        return false;
      }
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: pieces[i] } });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
    index++;
    return true;
  };
  if (preface && !(await textBlock([preface]))) return;
  if (call) {
    send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolId, name: call.name, input: {} } });
    if (index === 0) send('ping', { type: 'ping' });
    // The input JSON in pieces, starting with an empty one, as Anthropic streams it.
    const a = call.arguments;
    const half = Math.ceil(a.length / 2);
    for (const piece of ['', a.slice(0, half), a.slice(half)]) {
      if (!(await pause())) return;
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  } else if (!(await textBlock(limited!.parts))) return;
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: stopSequence },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
}
