// What a provider with its own wire format (Anthropic, Gemini) gives the
// relay: pure translators between the OpenAI shapes the gateway speaks and the
// provider's, with no I/O. The OpenAI side is the exact shape the gateway
// streams today (id, object, created, model, choices[{index, delta,
// finish_reason}], then a usage chunk with `choices: []`).
import { createSseReader } from '@kbchat/shared';
import type { GatewayError } from '../errors.js';
import type { ChannelOptions, UpstreamTarget } from './channel.js';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Tokens of the prompt read from the provider's cache (included in prompt_tokens). */
  prompt_tokens_details?: { cached_tokens: number };
  /** Anthropic's cache figures as they came (LiteLLM's names), for pricing cache writes and reads. */
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: { role: 'assistant'; content: string | null; tool_calls?: OpenAIToolCall[] }; finish_reason: FinishReason | null }[];
  usage: OpenAIUsage;
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  tool_calls?: { index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }[];
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: number; delta: ChunkDelta; finish_reason: FinishReason | null }[];
  usage?: OpenAIUsage;
}

export interface EmbeddingsResponse {
  object: 'list';
  /** A vector, or its little-endian float32 bytes in base64 (encoding_format "base64"). */
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/**
 * An upstream's refusal, translated: what the client sees (`error`, an OpenAI
 * envelope with the gateway's status), whether another channel may serve the
 * request, and whether it says this channel itself is broken.
 */
export class ProviderFailure extends Error {
  constructor(
    readonly error: GatewayError,
    readonly upstreamStatus: number,
    readonly retryable: boolean,
    readonly countsAgainstChannel: boolean,
  ) {
    super(error.message);
  }

  /** `error` with retryRules of `rulesStatus` (the upstream's own status unless the answer means another, e.g. a refused key). */
  static of(error: GatewayError, upstreamStatus: number, rulesStatus = upstreamStatus): ProviderFailure {
    const rules = retryRules(rulesStatus);
    return new ProviderFailure(error, upstreamStatus, rules.retryable, rules.countsAgainstChannel);
  }
}

/** [client status, OpenAI error type, code] for an error type or status a translator has no entry for. */
export function unmappedError(status: number): [number, string, string] {
  return [status >= 400 && status < 600 ? status : 502, 'upstream_error', 'bad_response_status_code'];
}

/** What a translated answer is called: the client's model name, and a fixed `created` (tests, replays). */
export interface WireContext {
  model: string;
  created?: number;
}

/** Translates one streamed answer: fed the provider's bytes in any splits, returns OpenAI chunks. */
export interface WireStream {
  push(part: Uint8Array | string): ChatCompletionChunk[];
  /** At the upstream's end: the last chunks; throws a ProviderFailure if the answer was cut short. */
  end(): ChatCompletionChunk[];
  /** Set when the provider reported an error inside the stream (nothing after it is translated). */
  readonly failure: ProviderFailure | undefined;
}

export type ChannelAccess = { baseUrl: string; key: string; options: ChannelOptions };

export interface WireAdapter {
  /** Where a chat request goes (Gemini: another method for streams). */
  chatTarget(upstreamModel: string, stream: boolean, channel: ChannelAccess): UpstreamTarget;
  /** An OpenAI chat body -> the provider's. Throws a 400 GatewayError naming the field it cannot translate. */
  chatRequest(body: Record<string, unknown>, upstreamModel: string): Record<string, unknown>;
  /** The provider's answer (parsed JSON) -> chat.completion; throws a ProviderFailure for a refusal inside a 200. */
  chatResponse(answer: unknown, ctx: WireContext): ChatCompletion;
  chatStream(ctx: WireContext): WireStream;
  /** A non-2xx answer -> what the client sees and what the relay does next. */
  error(status: number, body: string, headers?: Record<string, string | undefined>): ProviderFailure;
  embeddings?: {
    target(upstreamModel: string, channel: ChannelAccess): UpstreamTarget;
    /** One body per upstream call (the provider's batch limit). */
    requests(body: Record<string, unknown>, upstreamModel: string): Record<string, unknown>[];
    response(answers: unknown[], body: Record<string, unknown>, ctx: WireContext): EmbeddingsResponse;
  };
}

/** Builds the gateway's chunk objects for one answer. */
export class ChunkFactory {
  constructor(
    readonly id: string,
    readonly model: string,
    readonly created: number,
  ) {}

  chunk(delta: ChunkDelta, finishReason: FinishReason | null = null, index = 0): ChatCompletionChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index, delta, finish_reason: finishReason }] };
  }

  usage(usage: OpenAIUsage): ChatCompletionChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage };
  }
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** SSE events out of bytes in any splits (a character or a CRLF cut in two included). */
export class SseFeed {
  private readonly decoder = new TextDecoder();
  private readonly reader: { feed(text: string): void };

  constructor(onEvent: (data: string, event?: string) => void) {
    this.reader = createSseReader(onEvent);
  }

  push(part: Uint8Array | string): void {
    this.reader.feed(typeof part === 'string' ? part : this.decoder.decode(part, { stream: true }));
  }
}

/** JSON.parse that answers undefined instead of throwing. */
export function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The text of an OpenAI message content: a string, or its text parts joined. */
export function openAIText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p) => p?.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join('\n');
}

/** An OpenAI `image_url` as the provider needs it: inline bytes of a data: URL, or a remote URL. */
export function imageSource(url: unknown): { kind: 'data'; mediaType: string; data: string } | { kind: 'url'; url: string } | undefined {
  if (typeof url !== 'string') return undefined;
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (m) return { kind: 'data', mediaType: m[1]!, data: m[2]! };
  if (/^https?:\/\//i.test(url)) return { kind: 'url', url };
  return undefined;
}

/** stop: a string or a list of them -> a list (or undefined). */
export function stopList(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop) && stop.every((s) => typeof s === 'string')) return stop.length ? stop : undefined;
  return undefined;
}

/**
 * Retry and health rules, the same as the relay's for OpenAI-shaped upstreams:
 * another channel may serve what this one could not (429, overload, 5xx, this
 * channel's key refused), never a request the provider found wrong (400, 404,
 * 413, 422). Load (429, 529) never counts toward auto-disabling the channel.
 */
export function retryRules(status: number): { retryable: boolean; countsAgainstChannel: boolean } {
  const retryable = status === 429 || status >= 500 || status === 401 || status === 403 || status === 408;
  const countsAgainstChannel = (status >= 500 && status !== 529) || status === 401 || status === 403;
  return { retryable, countsAgainstChannel };
}

/** `base` + `path`, without doubling a version segment the operator already put in the base URL. */
export function providerUrl(base: string, version: string, path: string): string {
  const b = base.replace(/\/+$/, '');
  return (b.endsWith(`/${version}`) ? b : `${b}/${version}`) + path;
}
