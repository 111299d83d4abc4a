// Relaying through a channel whose provider has its own wire format (Anthropic,
// Gemini: providers/wire.ts). The client's OpenAI body is translated on the way
// up, the answer (or each streamed read) on the way back, and the provider's
// errors through its own mapper. Channels without `wire` never come here.
import { sseData, SSE_DONE } from '@kbchat/shared';
import { errors } from '../errors.js';
import type { Channel } from '../channels/registry.js';
import { ProviderFailure, type UpstreamTarget, type ChatCompletion, type ChatCompletionChunk, type WireAdapter } from '../providers/index.js';
import type { RelayContext, RelayDeps, Responder } from './context.js';
import { endStreamWithError, type StreamOutcome, type Usage } from './chat-stream.js';
import { tokenCount } from './run.js';
import { parseAnswer, UpstreamFailure, type StopSignal, type UpstreamClient } from './upstream.js';

/** A provider's refusal as the retry loop knows failures, with the provider's own retry and health rules. */
export class TranslatedFailure extends UpstreamFailure {
  constructor(readonly failure: ProviderFailure) {
    super('status', failure.error, failure.upstreamStatus);
  }

  override get retryable(): boolean {
    return this.failure.retryable;
  }

  override get countsAgainstChannel(): boolean {
    return this.failure.countsAgainstChannel;
  }
}

/** Any failure of a wire channel, as the retry loop needs it: non-2xx answers go through the provider's error mapper. */
export function wireFailure(wire: WireAdapter, err: unknown): unknown {
  if (err instanceof ProviderFailure) return new TranslatedFailure(err);
  if (err instanceof UpstreamFailure && err.answer && !(err instanceof TranslatedFailure)) {
    return new TranslatedFailure(wire.error(err.answer.status, err.answer.body, err.answer.headers));
  }
  return err;
}

/** Posts a translated body and reads the whole answer; a refusal comes back translated. */
export async function postWire(upstream: UpstreamClient, wire: WireAdapter, target: UpstreamTarget, body: unknown, signal?: StopSignal): Promise<any> {
  try {
    return parseAnswer((await upstream.postForText(target, JSON.stringify(body), signal)).text);
  } catch (err) {
    throw wireFailure(wire, err);
  }
}

/** A non-stream chat answer from a wire channel, as the OpenAI completion the client expects. */
export async function completeThroughWire(
  deps: RelayDeps,
  ctx: RelayContext,
  channel: Channel,
  upstreamModel: string,
  body: Record<string, any>,
): Promise<{ text: string; json: ChatCompletion }> {
  const wire = channel.provider.wire!;
  const request = wire.chatRequest(body, upstreamModel);
  const answer = await postWire(deps.upstream, wire, wire.chatTarget(upstreamModel, false, channel), request, ctx.signal);
  let completion: ChatCompletion;
  try {
    completion = wire.chatResponse(answer, { model: body.model });
  } catch (err) {
    throw wireFailure(wire, err);
  }
  return { text: JSON.stringify(completion), json: completion };
}

export interface WireStreamOptions {
  responder: Responder;
  clientWantsUsage: boolean;
  localUsage: (text: string) => Usage;
}

const hasContent = (c: ChatCompletionChunk): boolean => c.choices.some((x) => !!x.delta.content || !!x.delta.tool_calls);

/**
 * A streamed chat answer from a wire channel: the provider's bytes through its
 * stream translator, out as the gateway's OpenAI chunks. As for OpenAI
 * upstreams, nothing reaches the client before the first content, so a failure
 * until then is retried on another channel; after it, the failure is written
 * into the stream. The usage chunk goes out only when the client asked.
 */
export async function streamThroughWire(
  deps: RelayDeps,
  ctx: RelayContext,
  channel: Channel,
  upstreamModel: string,
  body: Record<string, any>,
  opts: WireStreamOptions,
): Promise<StreamOutcome> {
  const wire = channel.provider.wire!;
  const { responder } = opts;
  const sent = JSON.stringify(wire.chatRequest(body, upstreamModel));
  const target = wire.chatTarget(upstreamModel, true, channel);
  const translator = wire.chatStream({ model: body.model });
  const out: StreamOutcome = { text: '', unparsed: [], empty: true };
  let last: ChatCompletionChunk | undefined;
  let held = '';

  // The frames of a run of chunks; usage is kept, and its chunk shown only when asked for.
  const framesOf = (chunks: ChatCompletionChunk[]): string => {
    let frames = '';
    for (const c of chunks) {
      last = c;
      if (c.usage) {
        out.usage = { prompt_tokens: tokenCount(c.usage.prompt_tokens), completion_tokens: tokenCount(c.usage.completion_tokens) };
        if (!opts.clientWantsUsage && c.choices.length === 0) continue;
      }
      for (const choice of c.choices) {
        const d = choice.delta;
        if (d.content) out.text += d.content;
        if (d.tool_calls) for (const t of d.tool_calls) out.text += (t.function.name ?? '') + t.function.arguments;
      }
      if (out.empty && hasContent(c)) {
        out.empty = false;
        out.ttftMs = Date.now() - ctx.startedAt;
      }
      frames += sseData(c);
    }
    return frames;
  };

  // Held until the first content, then written as it comes (the promise pauses the upstream while the client's socket is full).
  const send = (frames: string): void | Promise<void> => {
    if (out.empty) {
      held += frames;
      return;
    }
    if (!responder.started) {
      responder.startStream();
      frames = held + frames;
      held = '';
    }
    if (frames) return responder.write(frames);
  };

  let tail: string;
  try {
    await deps.upstream.postStream(target, sent, ctx.signal, (part) => {
      const pending = send(framesOf(translator.push(part)));
      if (translator.failure) throw translator.failure;
      return pending;
    });
    tail = framesOf(translator.end());
  } catch (err) {
    const failure = streamFailure(wire, err, ctx.signal.aborted);
    if (!responder.started) throw failure;
    out.error = failure.error;
    out.errorIsLoad = !failure.countsAgainstChannel;
    endStreamWithError(responder, failure.error, ctx.requestId);
    return out;
  }
  if (!responder.started) {
    // An answer with no content at all (a content_filter finish, an empty text): sent as it is.
    responder.startStream();
    tail = held + tail;
    out.empty = false;
  }
  if (opts.clientWantsUsage && !out.usage && last) {
    const u = opts.localUsage(out.text);
    tail += sseData({
      id: last.id,
      object: 'chat.completion.chunk',
      created: last.created,
      model: last.model,
      choices: [],
      usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens },
    });
  }
  responder.end(tail + SSE_DONE);
  return out;
}

/** What broke a wire stream, as the retry loop (before content) or the stream's last event (after it) needs it. */
function streamFailure(wire: WireAdapter, err: unknown, clientGone: boolean): UpstreamFailure {
  const failure = wireFailure(wire, err);
  if (failure instanceof TranslatedFailure) return failure;
  // A client that went away aborts the upstream read too: no upstream fault.
  if (clientGone) return new UpstreamFailure('dropped', errors.clientClosed());
  if (failure instanceof UpstreamFailure) return failure;
  return new UpstreamFailure('dropped', errors.streamDropped((err as Error).message || String(err)));
}

/**
 * Embeddings from a wire channel: one upstream call per batch the provider
 * allows (Gemini: 100 inputs), one after another, then one OpenAI list. Its
 * usage is counted here, not reported upstream, so `json` carries none and the
 * log says "local".
 */
export async function embedThroughWire(
  deps: RelayDeps,
  ctx: RelayContext,
  wire: WireAdapter,
  channel: Channel,
  upstreamModel: string,
  body: Record<string, any>,
): Promise<{ text: string; json: undefined }> {
  const e = wire.embeddings!;
  const target = e.target(upstreamModel, channel);
  const answers: unknown[] = [];
  for (const request of e.requests(body, upstreamModel)) answers.push(await postWire(deps.upstream, wire, target, request, ctx.signal));
  return { text: JSON.stringify(e.response(answers, body, { model: body.model })), json: undefined };
}
