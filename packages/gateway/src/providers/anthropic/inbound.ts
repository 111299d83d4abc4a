// The other direction, for clients written for Anthropic (POST /v1/messages
// on the gateway): an Anthropic request -> an OpenAI chat body any channel
// can serve, and the OpenAI answer or chunks -> Anthropic's message or events.
import { anthropicRequestSchema } from '@kbchat/contracts/anthropic';
import { parseWith, sseEvent } from '@kbchat/shared';
import { errors, type GatewayError } from '../../errors.js';
import { parseJson, SseFeed, type FinishReason } from '../wire.js';

export { anthropicRequestSchema };

type Block = Record<string, any>;
const bad = (field: string, why: string) => errors.badField(field, `Invalid '${field}': ${why}`);
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content
          .filter((b) => b?.type === 'text')
          .map((b) => String(b.text ?? ''))
          .join('\n')
      : '';

function userParts(blocks: Block[], at: string): unknown[] {
  return blocks.flatMap((b, j): Block[] => {
    if (b.type === 'text') return [{ type: 'text', text: String(b.text ?? '') }];
    if (b.type === 'image' && b.source?.type === 'base64')
      return [{ type: 'image_url', image_url: { url: `data:${b.source.media_type};base64,${b.source.data}` } }];
    if (b.type === 'image' && b.source?.type === 'url') return [{ type: 'image_url', image_url: { url: b.source.url } }];
    if (b.type === 'tool_result') return [];
    throw bad(`${at}[${j}].type`, `content block type "${b.type}" is not supported by the gateway's /v1/messages`);
  });
}

/** An Anthropic Messages request -> an OpenAI chat body; throws a 400 GatewayError naming the field. */
export function openAIFromAnthropic(input: unknown): Record<string, unknown> {
  const parsed = parseWith(anthropicRequestSchema, input);
  if (!parsed.ok) throw errors.badField(parsed.problem.field, parsed.problem.message);
  const body = parsed.value as Record<string, any>;
  const messages: Record<string, unknown>[] = [];
  const system = textOf(body.system);
  if (system) messages.push({ role: 'system', content: system });
  body.messages.forEach((m: any, i: number) => {
    const blocks: Block[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    const at = `messages[${i}].content`;
    if (m.role === 'user') {
      // Results first (each a `tool` message), then what the user wrote.
      for (const b of blocks) {
        if (b.type === 'tool_result')
          messages.push({ role: 'tool', tool_call_id: String(b.tool_use_id), content: (b.is_error ? 'Error: ' : '') + textOf(b.content) });
      }
      const parts = userParts(blocks, at);
      if (parts.length) messages.push({ role: 'user', content: parts.every((p: any) => p.type === 'text') ? parts.map((p: any) => p.text).join('\n') : parts });
      return;
    }
    const calls = blocks
      .filter((b) => b.type === 'tool_use')
      .map((b) => ({ id: String(b.id), type: 'function', function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) } }));
    const text = textOf(blocks); // thinking blocks are the model's own: not sent on
    messages.push({ role: 'assistant', content: text || (calls.length ? null : ''), ...(calls.length ? { tool_calls: calls } : {}) });
  });
  const out: Record<string, unknown> = { model: body.model, messages, max_tokens: body.max_tokens };
  if (body.temperature !== undefined) out.temperature = body.temperature;
  if (body.top_p !== undefined) out.top_p = body.top_p;
  if (body.stop_sequences?.length) out.stop = body.stop_sequences;
  if (body.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true }; // message_delta reports the usage
  }
  if (body.tools?.length) {
    out.tools = body.tools.map((t: any) => ({
      type: 'function',
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema ?? { type: 'object', properties: {} } },
    }));
    const c = body.tool_choice;
    if (c) out.tool_choice = c.type === 'any' ? 'required' : c.type === 'tool' ? { type: 'function', function: { name: c.name } } : c.type;
    if (c?.disable_parallel_tool_use) out.parallel_tool_calls = false;
  }
  if (body.metadata?.user_id) out.user = body.metadata.user_id;
  return out;
}

const STOP_REASON: Record<FinishReason, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };
const stopReasonOf = (finish: unknown): string => STOP_REASON[finish as FinishReason] ?? 'end_turn';

/** OpenAI usage -> Anthropic's, where input_tokens leaves out what was read from the cache. */
function anthropicUsage(u: any): Record<string, number> {
  const cached = Number(u?.prompt_tokens_details?.cached_tokens ?? u?.cache_read_input_tokens ?? 0) || 0;
  const written = Number(u?.cache_creation_input_tokens ?? 0) || 0;
  return {
    input_tokens: Math.max(0, (Number(u?.prompt_tokens) || 0) - cached - written),
    output_tokens: Number(u?.completion_tokens) || 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  };
}

function toolInput(args: unknown): unknown {
  const v = typeof args === 'string' && args.trim() ? parseJson(args) : {};
  return v && typeof v === 'object' && !Array.isArray(v) ? v : { arguments: args };
}

const messageId = (id: unknown): string => `msg_${String(id ?? 'gateway').replace(/^chatcmpl-/, '')}`;

/** An OpenAI chat.completion -> an Anthropic message (the first choice). */
export function anthropicFromOpenAI(answer: any, model: string): Record<string, unknown> {
  const choice = answer?.choices?.[0];
  const m = choice?.message ?? {};
  const content: Block[] = [];
  if (typeof m.content === 'string' && m.content) content.push({ type: 'text', text: m.content });
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    content.push({ type: 'tool_use', id: String(c.id), name: String(c.function?.name), input: toolInput(c.function?.arguments) });
  }
  return {
    id: messageId(answer?.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: anthropicUsage(answer?.usage),
  };
}

/** Anthropic's error type for a gateway status. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  if (status === 504) return 'timeout_error';
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

/** The status Anthropic answers an error with: its own 529 for an overload, else the gateway's. */
export function anthropicErrorStatus(status: number): number {
  return status === 503 ? 529 : status;
}

/** A gateway error in Anthropic's envelope (the gateway's request id in the message and in request_id). */
export function anthropicErrorBody(error: GatewayError, requestId: string): Record<string, unknown> {
  return { type: 'error', error: { type: errorType(error.status), message: error.toBody(requestId).error.message }, request_id: requestId };
}

/** A gateway error as the `error` event that ends an Anthropic stream. */
export function anthropicErrorEvent(error: GatewayError, requestId: string): string {
  return sseEvent('error', anthropicErrorBody(error, requestId));
}

/**
 * OpenAI chunks -> Anthropic events, incrementally: fed chunk objects, or the
 * SSE bytes of an OpenAI stream in any splits. Text opens a text block; each
 * tool_calls index opens a tool_use block; the stop reason and usage go out in
 * message_delta at the end (`[DONE]` or finish()).
 */
export class AnthropicEventStream {
  private readonly feed = new SseFeed((data) => (data === '[DONE]' ? this.finishInto() : this.chunkInto(parseJson(data))));
  private out = '';
  private started = false;
  private done = false;
  private index = -1;
  private open: 'text' | 'tool' | null = null;
  private readonly toolBlocks = new Map<number, number>();
  private finishReason: unknown = null;
  private usage: unknown;

  /** `inputTokens`: the gateway's estimate for message_start (the real figure follows in message_delta). */
  constructor(
    private readonly model: string,
    private readonly inputTokens = 0,
  ) {}

  /** SSE bytes of an OpenAI stream -> Anthropic SSE text. */
  push(part: Uint8Array | string): string {
    this.feed.push(part);
    return this.take();
  }

  /** One OpenAI chunk object -> Anthropic SSE text. */
  pushChunk(chunk: unknown): string {
    this.chunkInto(chunk);
    return this.take();
  }

  /** The closing events (once): open block stopped, message_delta, message_stop. */
  finish(): string {
    this.finishInto();
    return this.take();
  }

  private take(): string {
    const s = this.out;
    this.out = '';
    return s;
  }

  private emit(event: string, data: Record<string, unknown>): void {
    this.out += sseEvent(event, { type: event, ...data });
  }

  private start(id: unknown): void {
    if (this.started) return;
    this.started = true;
    const usage = { input_tokens: this.inputTokens, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    this.emit('message_start', {
      message: { id: messageId(id), type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage },
    });
    this.emit('ping', {});
  }

  private closeBlock(): void {
    if (this.open) this.emit('content_block_stop', { index: this.index });
    this.open = null;
  }

  private chunkInto(chunk: any): void {
    if (this.done || !chunk || typeof chunk !== 'object') return;
    this.start(chunk.id);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c: any) => (c?.index ?? 0) === 0) : undefined;
    const d = choice?.delta ?? {};
    if (typeof d.content === 'string' && d.content) {
      if (this.open !== 'text') {
        this.closeBlock();
        this.open = 'text';
        this.emit('content_block_start', { index: ++this.index, content_block: { type: 'text', text: '' } });
      }
      this.emit('content_block_delta', { index: this.index, delta: { type: 'text_delta', text: d.content } });
    }
    for (const t of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
      const n = typeof t?.index === 'number' ? t.index : 0;
      if (!this.toolBlocks.has(n)) {
        this.closeBlock();
        this.open = 'tool';
        this.toolBlocks.set(n, ++this.index);
        this.emit('content_block_start', {
          index: this.index,
          content_block: { type: 'tool_use', id: String(t.id ?? `toolu_${n}`), name: String(t.function?.name ?? ''), input: {} },
        });
      }
      const args = t?.function?.arguments;
      // Interleaved calls are not Anthropic's shape: arguments go to their own block while it is the open one.
      if (typeof args === 'string' && args && this.toolBlocks.get(n) === this.index) {
        this.emit('content_block_delta', { index: this.index, delta: { type: 'input_json_delta', partial_json: args } });
      }
    }
    if (choice?.finish_reason) this.finishReason = choice.finish_reason;
  }

  private finishInto(): void {
    if (this.done) return;
    this.start(undefined);
    this.done = true;
    this.closeBlock();
    const u = anthropicUsage(this.usage);
    this.emit('message_delta', { delta: { stop_reason: stopReasonOf(this.finishReason), stop_sequence: null }, usage: u });
    this.emit('message_stop', {});
  }
}
