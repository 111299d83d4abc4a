// The platform's only way to models: HTTP to the gateway (GATEWAY_URL with
// GATEWAY_TOKEN). undici with a keep-alive pool, the project's HTTP client of
// choice. Every failure becomes a GatewayError that keeps the gateway's own
// message and request id; an unreachable gateway says "Connection error" and
// names the address, so the operator knows which setting to fix.
import type { GatewayLogRow } from '@kbchat/contracts';
import { createSseReader } from '@kbchat/shared';
import { Agent, request, type Dispatcher } from 'undici';
import { errorFromResponse, GatewayError, isGatewayError } from './errors.js';
import { ModelFailures } from './model-failures.js';

export type { GatewayLogRow };

export interface GatewayClientOptions {
  /** The gateway root (http://host:3001); a trailing "/v1" is accepted too. */
  url: string;
  token?: string;
  /** Longest wait for the answer's headers and between body chunks (default 120 s). */
  timeoutMs?: number;
  /** Connections kept to the gateway (default 32). */
  connections?: number;
}

export interface EmbeddingsResult {
  vectors: Float32Array[];
  promptTokens: number;
  requestId: string | undefined;
}

/** A tool call the model made, put together from its stream's pieces (or read whole from an answer). */
export interface ModelToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them: JSON text, perhaps broken. */
  arguments: string;
}

export interface ChatStreamResult {
  content: string;
  finishReason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined;
  requestId: string | undefined;
  /** The tool calls (or the legacy function_call, as one) the stream carried; none for most answers. */
  toolCalls?: ModelToolCall[];
}

/**
 * Adds a stream delta's tool-call pieces: OpenAI sends each call's id and
 * name once, then its arguments in pieces, keyed by the call's index.
 */
function addCallDeltas(
  out: ChatStreamResult,
  byIndex: Map<number, ModelToolCall>,
  delta: { tool_calls?: unknown; function_call?: { name?: string; arguments?: string } },
): void {
  const calls = (out.toolCalls ??= []);
  if (delta.function_call) {
    const call = (calls[0] ??= { id: 'function_call', name: '', arguments: '' });
    call.name += delta.function_call.name ?? '';
    call.arguments += delta.function_call.arguments ?? '';
    return;
  }
  if (!Array.isArray(delta.tool_calls)) return;
  for (const piece of delta.tool_calls as { index?: number; id?: string; function?: { name?: string; arguments?: string } }[]) {
    // By index where it is a small whole number; a new id at an index already taken is a new call
    // (some OpenAI-compatible servers send every call at index 0).
    const index = Number.isInteger(piece.index) && piece.index! >= 0 && piece.index! < 64 ? piece.index! : calls.length - 1;
    let call = byIndex.get(index);
    if (!call || (piece.id && call.id && piece.id !== call.id)) {
      call = { id: piece.id ?? `call_${calls.length}`, name: '', arguments: '' };
      calls.push(call);
      byIndex.set(index, call);
    }
    call.name += piece.function?.name ?? '';
    call.arguments += piece.function?.arguments ?? '';
  }
}

export interface RerankResult {
  results: { index: number; relevanceScore: number }[];
  requestId: string | undefined;
}

type Headers = Record<string, string | string[] | undefined>;

/** Little-endian float32 base64 (OpenAI's encoding_format "base64") to a Float32Array. */
export function decodeBase64Floats(b64: string): Float32Array {
  const buf = Buffer.from(b64, 'base64');
  const out = new Float32Array(buf.length >>> 2);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

export class GatewayClient {
  readonly url: string;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;
  private readonly agent: Agent;
  /** Set on a client made by forRequest(): the platform request its calls belong to, and how many it made. */
  private request: { id: string; calls: number } | undefined;
  /** Each model's failed calls since its last success (shared with the forRequest() clients). */
  readonly failures = new ModelFailures();

  constructor(opts: GatewayClientOptions) {
    this.url = opts.url.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.token = opts.token;
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.agent = new Agent({
      connections: opts.connections ?? 32,
      keepAliveTimeout: 30_000,
      connect: { timeout: Math.min(this.timeoutMs, 10_000) },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  /**
   * This client (the same connections) for the calls of one platform request:
   * the n-th call sends `X-Request-Id: <requestId>-<n>`, which the gateway
   * takes as its own id, so that the platform's id finds the gateway's log
   * lines and request log rows too (each call its own row: a chat turn makes
   * several). Passed explicitly rather than through AsyncLocalStorage, whose
   * promise hooks would slow every await of the process, the relay's under
   * `kbchat start` included.
   */
  forRequest(requestId: string): GatewayClient {
    // Everything but `request` is this client's, through the prototype: no new connections.
    const scoped = Object.create(this) as GatewayClient;
    scoped.request = { id: requestId, calls: 0 };
    return scoped;
  }

  /** The gateway request ids of the calls this forRequest() client has made so far (none for the shared client). */
  requestIdsSoFar(): string[] {
    const r = this.request;
    return r ? Array.from({ length: r.calls }, (_, i) => `${r.id}-${i + 1}`) : [];
  }

  /**
   * Embeds `inputs` in one call; vectors come back in input order.
   * `priority` goes as X-Kbchat-Priority: kbchat's local models queue bulk
   * (indexing) behind interactive work (a question); other upstreams never
   * see it (the gateway relays it to the local channel only).
   */
  embeddings(model: string, inputs: string[], opts: { priority?: 'bulk' | 'interactive' } = {}): Promise<EmbeddingsResult> {
    return this.watched(model, undefined, () => this.embeddingsCall(model, inputs, opts));
  }

  private async embeddingsCall(model: string, inputs: string[], opts: { priority?: 'bulk' | 'interactive' }): Promise<EmbeddingsResult> {
    const body = JSON.stringify({ model, input: inputs, encoding_format: 'base64' });
    const { json, requestId } = await this.postJson('/v1/embeddings', body, undefined, opts.priority && { 'x-kbchat-priority': opts.priority });
    const data = Array.isArray(json?.data) ? (json.data as { index?: number; embedding?: unknown }[]) : [];
    if (data.length !== inputs.length) {
      throw this.badResponse(`the gateway returned ${data.length} embeddings for ${inputs.length} inputs`, requestId, body);
    }
    const vectors = new Array<Float32Array>(inputs.length);
    data.forEach((d, i) => {
      const at = typeof d.index === 'number' ? d.index : i;
      // Some upstreams ignore encoding_format and send float arrays: accept both.
      if (typeof d.embedding === 'string') vectors[at] = decodeBase64Floats(d.embedding);
      else if (Array.isArray(d.embedding)) vectors[at] = Float32Array.from(d.embedding as number[]);
      else throw this.badResponse(`embedding ${at} is neither base64 nor an array of numbers`, requestId, body);
    });
    if (vectors.some((v) => !v)) throw this.badResponse('the embeddings did not cover every input index', requestId, body);
    return { vectors, promptTokens: Number(json?.usage?.prompt_tokens ?? 0), requestId };
  }

  /** A non-stream chat completion; `body` is the OpenAI request (stream is forced off). */
  chat(body: Record<string, unknown>, signal?: AbortSignal): Promise<{ json: any; requestId: string | undefined }> {
    return this.watched(body.model, signal, () => this.postJson('/v1/chat/completions', JSON.stringify({ ...body, stream: false }), signal));
  }

  /** A streamed chat completion: `onDelta` gets each piece of content as it arrives. */
  chatStream(body: Record<string, unknown>, onDelta: (text: string, chunk: any) => void, signal?: AbortSignal): Promise<ChatStreamResult> {
    return this.watched(body.model, signal, () => this.chatStreamCall(body, onDelta, signal));
  }

  private async chatStreamCall(body: Record<string, unknown>, onDelta: (text: string, chunk: any) => void, signal?: AbortSignal): Promise<ChatStreamResult> {
    const sent = JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } });
    const res = await this.send('POST', '/v1/chat/completions', sent, signal);
    const requestId = headerOf(res.headers, 'x-request-id');
    if (res.statusCode < 200 || res.statusCode >= 300) throw errorFromResponse(res.statusCode, res.headers, await res.body.text(), sent);
    const out: ChatStreamResult = { content: '', finishReason: null, usage: undefined, requestId };
    const callsByIndex = new Map<number, ModelToolCall>();
    let streamError: GatewayError | undefined;
    const reader = createSseReader((data) => {
      if (data === '[DONE]' || streamError) return;
      let chunk: any;
      try {
        chunk = JSON.parse(data);
      } catch {
        return; // a keep-alive or comment-like line: nothing to show
      }
      if (chunk?.error) {
        // The gateway ends a stream that failed midway with an error envelope.
        streamError = errorFromResponse(502, res.headers, data, sent);
        return;
      }
      if (chunk?.usage) out.usage = chunk.usage;
      const choice = chunk?.choices?.[0];
      if (choice?.finish_reason) out.finishReason = choice.finish_reason;
      const text = choice?.delta?.content;
      if (typeof text === 'string' && text) {
        out.content += text;
        onDelta(text, chunk);
      }
      if (choice?.delta?.tool_calls || choice?.delta?.function_call) addCallDeltas(out, callsByIndex, choice.delta);
    });
    try {
      for await (const piece of res.body) reader.feed((piece as Buffer).toString('utf8'));
    } catch (err) {
      throw this.transportError(err, sent);
    }
    if (streamError) throw streamError;
    return out;
  }

  async rerank(model: string, query: string, documents: string[], topN?: number): Promise<RerankResult> {
    const body = JSON.stringify({ model, query, documents, ...(topN ? { top_n: topN } : {}) });
    const { json, requestId } = await this.watched(model, undefined, () => this.postJson('/v1/rerank', body));
    const results = Array.isArray(json?.results) ? json.results : [];
    return {
      results: results.map((r: { index: number; relevance_score: number }) => ({ index: r.index, relevanceScore: r.relevance_score })),
      requestId,
    };
  }

  /** The model names the gateway serves to this token (GET /v1/models). */
  async models(): Promise<string[]> {
    const res = await this.send('GET', '/v1/models', undefined);
    const text = await this.readText(res, undefined);
    if (res.statusCode < 200 || res.statusCode >= 300) throw errorFromResponse(res.statusCode, res.headers, text, undefined);
    const json = this.parse(text, headerOf(res.headers, 'x-request-id'), undefined);
    return Array.isArray(json?.data) ? json.data.map((m: { id: string }) => m.id) : [];
  }

  /**
   * The gateway's log row of one request (undefined when it has none), from
   * its admin API: the log is the books, so channel and cost are what it
   * charged. A token that is not an administrator's gets the gateway's 403.
   */
  async requestLog(requestId: string): Promise<GatewayLogRow | undefined> {
    const json = await this.getJson(`/api/logs?request_id=${encodeURIComponent(requestId)}&limit=1`);
    const r = Array.isArray(json?.data) ? json.data[0] : undefined;
    if (!r) return undefined;
    const num = (v: unknown) => Number(v ?? 0);
    return {
      requestId: String(r.request_id),
      channelId: r.channel_id ?? null,
      model: String(r.model ?? ''),
      upstreamModel: r.upstream_model ?? null,
      cost: num(r.cost),
      costMicros: num(r.cost_micros),
      latencyMs: num(r.latency_ms),
      ttftMs: r.ttft_ms ?? null,
      status: num(r.status),
      attempts: num(r.attempts),
      promptTokens: num(r.prompt_tokens),
      completionTokens: num(r.completion_tokens),
      error: r.error ?? null,
    };
  }

  /** A channel's name (the gateway's admin API), undefined when it is gone. */
  async channelName(id: number): Promise<string | undefined> {
    try {
      const json = await this.getJson(`/api/channels/${id}`);
      return typeof json?.name === 'string' ? json.name : undefined;
    } catch (err) {
      if (err instanceof GatewayError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Rejects unless the gateway answers GET /healthz with a 2xx within `timeoutMs` (the platform's /readyz). */
  async ping(timeoutMs: number): Promise<void> {
    let res: Dispatcher.ResponseData;
    try {
      res = await this.send('GET', '/healthz', undefined, AbortSignal.timeout(timeoutMs));
    } catch (err) {
      if (err instanceof GatewayError && err.status === 499)
        throw new GatewayError(504, 'timeout', `the gateway at ${this.url} did not answer within ${timeoutMs} ms`, undefined, undefined);
      throw err;
    }
    await this.readText(res, undefined);
    if (res.statusCode < 200 || res.statusCode >= 300)
      throw new GatewayError(
        res.statusCode,
        'bad_status',
        `the gateway at ${this.url} answered GET /healthz with ${res.statusCode}`,
        headerOf(res.headers, 'x-request-id'),
        undefined,
      );
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /** A model call, its outcome noted in `failures` (a call the caller aborted is neither). */
  private async watched<T>(model: unknown, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    try {
      const result = await call();
      if (typeof model === 'string') this.failures.noteSuccess(model);
      return result;
    } catch (err) {
      if (typeof model === 'string' && !signal?.aborted && isGatewayError(err)) this.failures.noteFailure(model, err.status, err.message);
      throw err;
    }
  }

  private async getJson(path: string): Promise<any> {
    const res = await this.send('GET', path, undefined);
    const text = await this.readText(res, undefined);
    if (res.statusCode < 200 || res.statusCode >= 300) throw errorFromResponse(res.statusCode, res.headers, text, undefined);
    return this.parse(text, headerOf(res.headers, 'x-request-id'), undefined);
  }

  private async postJson(
    path: string,
    body: string,
    signal?: AbortSignal,
    extraHeaders?: Record<string, string>,
  ): Promise<{ json: any; requestId: string | undefined }> {
    const res = await this.send('POST', path, body, signal, extraHeaders);
    const text = await this.readText(res, body);
    const requestId = headerOf(res.headers, 'x-request-id');
    if (res.statusCode < 200 || res.statusCode >= 300) throw errorFromResponse(res.statusCode, res.headers, text, body);
    return { json: this.parse(text, requestId, body), requestId };
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    body: string | undefined,
    signal?: AbortSignal,
    extraHeaders?: Record<string, string>,
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { accept: 'application/json', ...extraHeaders };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    // A client for one platform request (forRequest): the gateway takes this as its request id (logs, request log, errors).
    if (this.request) headers['x-request-id'] = `${this.request.id}-${++this.request.calls}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await request(this.url + path, { method, headers, body, dispatcher: this.agent, signal });
    } catch (err) {
      throw this.transportError(err, body);
    }
  }

  private async readText(res: Dispatcher.ResponseData, body: string | undefined): Promise<string> {
    try {
      return await res.body.text();
    } catch (err) {
      throw this.transportError(err, body);
    }
  }

  private parse(text: string, requestId: string | undefined, body: string | undefined): any {
    try {
      return JSON.parse(text);
    } catch {
      throw this.badResponse(`the gateway's answer is not JSON: ${text.slice(0, 200)}`, requestId, body);
    }
  }

  private badResponse(detail: string, requestId: string | undefined, body: string | undefined): GatewayError {
    const message = requestId ? `${detail} (request id: ${requestId})` : detail;
    return new GatewayError(502, 'bad_response', message, requestId, body);
  }

  /** undici's errors: a timeout is a 504, anything else a 502 "Connection error" naming the address. */
  private transportError(err: unknown, body: string | undefined): GatewayError {
    if (err instanceof GatewayError) return err;
    const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
    const code = e.code ?? e.cause?.code;
    // The caller gave up (its own client left): not the gateway's fault.
    if (code === 'UND_ERR_ABORTED' || (e as Error).name === 'AbortError')
      return new GatewayError(499, 'client_closed', 'The request was cancelled: the client went away', undefined, body);
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new GatewayError(504, 'timeout', `Timeout: the gateway at ${this.url} did not answer within ${this.timeoutMs} ms`, undefined, body);
    }
    const cause = e.cause?.message && e.cause.message !== e.message ? `${e.message}: ${e.cause.message}` : (e.message ?? String(err));
    return new GatewayError(502, 'connection_error', `Connection error: ${this.url}: ${cause || code || 'unknown error'}`, undefined, body);
  }
}

function headerOf(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v) || undefined;
}
