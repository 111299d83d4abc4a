// POST /v1/chat/completions, stream and non-stream. Every field the gateway
// does not need is passed through untouched; only `model` (mapping) and, for
// streams, `stream_options` (to get usage) may be changed on the way up.
import { chatRequestSchema } from '@kbchat/contracts/openai';
import { countChatPromptTokens, countTextTokens, parseWith } from '@kbchat/shared';
import { errors, type GatewayError } from '../errors.js';
import type { Channel } from '../channels/registry.js';
import { withAttempts } from './attempts.js';
import { completeThroughWire, streamThroughWire } from './chat-wire.js';
import { answerText, choicesText, completionToChunks, endStreamWithError, pipeChatStream, type Usage } from './chat-stream.js';
import type { RelayContext, RelayDeps, Responder } from './context.js';
import { recordFailure, RelayRun, tokenCount, type RunResult } from './run.js';
import { UpstreamFailure } from './upstream.js';

/** A non-stream answer's text, for counting tokens locally. */
function messageText(body: any): string {
  return choicesText(body?.choices, 'message');
}

function usageOf(body: any): Usage | undefined {
  const u = body?.usage;
  if (!u || typeof u !== 'object') return undefined;
  return { prompt_tokens: tokenCount(u.prompt_tokens), completion_tokens: tokenCount(u.completion_tokens) };
}

export async function relayChat(deps: RelayDeps, ctx: RelayContext, rawBody: unknown, responder: Responder): Promise<void> {
  const parsed = parseWith(chatRequestSchema, rawBody);
  if (!parsed.ok) throw errors.badField(parsed.problem.field, parsed.problem.message);
  const body = parsed.value as Record<string, any>;
  const stream = body.stream === true;
  const bodyText = ctx.rawBody ?? JSON.stringify(body);
  // Every one of the n choices may produce the full output.
  const maxOut = (body.max_completion_tokens ?? body.max_tokens ?? deps.config.reserveOutputTokens) * (body.n ?? 1);
  // Reservation estimate: half the body's length in tokens is above the real
  // count for prose; the settlement refunds the difference.
  const run = await RelayRun.begin(deps, ctx, responder, 'chat', body.model, stream, Math.ceil(bodyText.length / 2), maxOut);
  const localPrompt = () => countChatPromptTokens(body.messages, body.tools);
  const result: RunResult = { attempts: 0, promptTokens: 0, completionTokens: 0, usageSource: 'none', status: 200 };
  let sent = '';
  try {
    if (!stream) {
      const a = await withAttempts(deps, ctx, 'chat', body.model, async (channel, upstreamModel) => {
        // A provider with its own wire format translates both ways. A replay goes through the relay in
        // OpenAI format, so the client's body is kept for it (not the translation, nor an earlier attempt's body).
        if (channel.provider.wire) {
          sent = '';
          return completeThroughWire(deps, ctx, channel, upstreamModel, body);
        }
        // Nothing to change: the client's own bytes go up, untouched and unserialised.
        sent = upstreamModel === body.model && ctx.rawBody ? ctx.rawBody : upstreamBody(body, upstreamModel, channel, false);
        return deps.upstream.postJson(channel.provider.target('chat', upstreamModel, channel), sent, ctx.signal);
      });
      Object.assign(result, { model: a.model, channel: a.channel, upstreamModel: a.upstreamModel, attempts: a.attempts });
      setUsage(result, usageOf(a.value.json), localPrompt, () => countTextTokens(messageText(a.value.json)));
      responder.json(200, a.value.text);
      return;
    }
    const clientWantsUsage = body.stream_options?.include_usage === true;
    const a = await withAttempts(
      deps,
      ctx,
      'chat',
      body.model,
      (channel, upstreamModel) => {
        if (channel.provider.wire) {
          sent = ''; // the client's body is kept, as for non-stream above
          const localUsage = (text: string) => ({ prompt_tokens: localPrompt(), completion_tokens: countTextTokens(text) });
          return streamThroughWire(deps, ctx, channel, upstreamModel, body, { responder, clientWantsUsage, localUsage });
        }
        sent = streamBody(body, ctx.rawBody, upstreamModel, channel);
        const target = channel.provider.target('chat', upstreamModel, channel);
        return pipeChatStream((onChunk) => deps.upstream.postStream(target, sent, ctx.signal, onChunk), {
          responder,
          requestId: ctx.requestId,
          startedAt: ctx.startedAt,
          signal: ctx.signal,
          clientWantsUsage,
          localUsage: (text) => ({ prompt_tokens: localPrompt(), completion_tokens: countTextTokens(text) }),
        });
      },
      // A stream the upstream broke off after it began is the channel's fault too (not an overload a provider reported in it).
      (o) => (o.errorIsLoad ? undefined : o.error?.message),
    );
    Object.assign(result, { model: a.model, channel: a.channel, upstreamModel: a.upstreamModel, attempts: a.attempts, ttftMs: a.value.ttftMs });
    if (a.value.empty) {
      await answerEmptyStream(deps, ctx, body, a.channel, a.upstreamModel, clientWantsUsage, responder, result, localPrompt);
      return;
    }
    setUsage(result, a.value.usage, localPrompt, () => countTextTokens(answerText(a.value)));
    if (a.value.error) {
      result.error = a.value.error;
      result.status = a.value.error.status;
      result.failedBody = sent || bodyText;
    }
  } catch (err) {
    throw recordFailure(result, err, ctx, sent || bodyText);
  } finally {
    run.finish(result);
  }
}

function setUsage(result: RunResult, upstream: Usage | undefined, localPrompt: () => number, localCompletion: () => number): void {
  if (upstream) {
    result.promptTokens = upstream.prompt_tokens;
    result.completionTokens = upstream.completion_tokens;
    result.usageSource = 'upstream';
  } else {
    result.promptTokens = localPrompt();
    result.completionTokens = localCompletion();
    result.usageSource = 'local';
  }
}

const USAGE_OPTION = ',"stream_options":{"include_usage":true}';

/**
 * The body of a streamed request. The common case (same model, no
 * stream_options of the client's) is the client's own text with the usage
 * option added before its closing brace: no serialising of the whole body.
 */
function streamBody(body: Record<string, any>, rawBody: string | undefined, upstreamModel: string, channel: Channel): string {
  if (rawBody === undefined || upstreamModel !== body.model || body.stream_options !== undefined) return upstreamBody(body, upstreamModel, channel, true);
  if (!(channel.options.streamUsage ?? channel.provider.streamUsageDefault)) return rawBody;
  // A JSON object's text: its last non-space character is the closing brace.
  const close = rawBody.lastIndexOf('}');
  return rawBody.slice(0, close) + USAGE_OPTION + rawBody.slice(close);
}

function upstreamBody(body: Record<string, any>, upstreamModel: string, channel: Channel, stream: boolean): string {
  const out: Record<string, any> = { ...body, model: upstreamModel };
  if (stream) {
    const wantsUsage = channel.options.streamUsage ?? channel.provider.streamUsageDefault;
    if (wantsUsage) out.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
    // The channel's upstream rejects stream_options: usage is counted locally instead.
    else delete out.stream_options;
  }
  return JSON.stringify(out);
}

/**
 * The upstream streamed nothing. Upstreams do this when they reject a
 * parameter in stream mode (the non-stream call says why), so ask once more
 * with stream=false and send the client either the answer or that exact error.
 */
async function answerEmptyStream(
  deps: RelayDeps,
  ctx: RelayContext,
  body: Record<string, any>,
  channel: Channel,
  upstreamModel: string,
  clientWantsUsage: boolean,
  responder: Responder,
  result: RunResult,
  localPrompt: () => number,
): Promise<void> {
  const { stream_options: _drop, ...rest } = body;
  const sent = JSON.stringify({ ...rest, model: upstreamModel, stream: false });
  result.attempts += 1;
  let error: GatewayError | undefined;
  let json: any;
  try {
    json = (await deps.upstream.postJson(channel.provider.target('chat', upstreamModel, channel), sent, ctx.signal)).json;
  } catch (err) {
    // The client leaving during the second call is not the upstream's fault.
    error = ctx.signal.aborted ? errors.clientClosed() : err instanceof UpstreamFailure ? err.error : errors.badUpstreamBody((err as Error).message);
  }
  if (!error && !messageText(json)) error = errors.emptyStream();
  responder.startStream();
  if (error) {
    result.error = error;
    result.status = error.status;
    result.failedBody = sent;
    endStreamWithError(responder, error, ctx.requestId);
    return;
  }
  result.ttftMs = Date.now() - ctx.startedAt;
  setUsage(result, usageOf(json), localPrompt, () => countTextTokens(messageText(json)));
  if (clientWantsUsage && !json.usage) {
    json.usage = {
      prompt_tokens: result.promptTokens,
      completion_tokens: result.completionTokens,
      total_tokens: result.promptTokens + result.completionTokens,
    };
  }
  for (const frame of completionToChunks(json, clientWantsUsage)) await responder.write(frame);
  responder.end();
}
