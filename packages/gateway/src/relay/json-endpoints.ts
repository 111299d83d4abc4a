// POST /v1/embeddings and POST /v1/rerank: one JSON request, one JSON answer,
// relayed through the same attempts, billing and logs as chat.
import { embeddingsRequestSchema, rerankRequestSchema } from '@kbchat/contracts/openai';
import { countInputTokens, countTextTokens, parseWith } from '@kbchat/shared';
import type { z } from 'zod';
import { errors } from '../errors.js';
import type { Endpoint } from '../providers/index.js';
import { withAttempts } from './attempts.js';
import { parseAnswer } from './upstream.js';
import { embedThroughWire } from './chat-wire.js';
import type { RelayContext, RelayDeps, Responder } from './context.js';
import { recordFailure, RelayRun, tokenCount, type RunResult } from './run.js';

interface JsonEndpoint {
  endpoint: Endpoint;
  schema: z.ZodType<Record<string, any>>;
  /** Input tokens counted locally. */
  localTokens(body: Record<string, any>): number;
  /** Input tokens the upstream reported, if it did. */
  upstreamTokens(json: any): number | undefined;
}

const embeddings: JsonEndpoint = {
  endpoint: 'embeddings',
  schema: embeddingsRequestSchema,
  localTokens: (b) => countInputTokens(b.input),
  upstreamTokens: (j) => (j?.usage ? tokenCount(j.usage.prompt_tokens ?? j.usage.total_tokens) : undefined),
};

const rerank: JsonEndpoint = {
  endpoint: 'rerank',
  schema: rerankRequestSchema,
  localTokens: (b) => countTextTokens(b.query) + b.documents.reduce((n: number, d: any) => n + countTextTokens(typeof d === 'string' ? d : d.text), 0),
  upstreamTokens: (j) => {
    const t = j?.meta?.tokens?.input_tokens ?? j?.meta?.billed_units?.search_units ?? j?.usage?.total_tokens ?? j?.usage?.prompt_tokens;
    return t === undefined ? undefined : tokenCount(t);
  },
};

/**
 * The caller's lane on kbchat's local models (Provider.relaysPriority):
 * indexing says bulk. The local server checks the value (a 400 naming the
 * header, the caller's error); other upstreams never get it.
 */
const PRIORITY_HEADER = 'x-kbchat-priority';

export const relayEmbeddings = (deps: RelayDeps, ctx: RelayContext, raw: unknown, r: Responder) => relayJson(embeddings, deps, ctx, raw, r);
export const relayRerank = (deps: RelayDeps, ctx: RelayContext, raw: unknown, r: Responder) => relayJson(rerank, deps, ctx, raw, r);

async function relayJson(spec: JsonEndpoint, deps: RelayDeps, ctx: RelayContext, raw: unknown, responder: Responder): Promise<void> {
  const parsed = parseWith(spec.schema, raw);
  if (!parsed.ok) throw errors.badField(parsed.problem.field, parsed.problem.message);
  const body = parsed.value;
  const bodyText = ctx.rawBody ?? JSON.stringify(body);
  const run = await RelayRun.begin(deps, ctx, responder, spec.endpoint, body.model, false, Math.ceil(bodyText.length / 2), 0);
  const result: RunResult = { attempts: 0, promptTokens: 0, completionTokens: 0, usageSource: 'none', status: 200 };
  let sent = '';
  try {
    const a = await withAttempts(deps, ctx, spec.endpoint, body.model, async (channel, upstreamModel) => {
      // Only embeddings have a wire translation; the registry picks no wire channel for rerank (its endpoints).
      if (channel.provider.wire?.embeddings) return embedThroughWire(deps, ctx, channel.provider.wire, channel, upstreamModel, body);
      sent = upstreamModel === body.model ? bodyText : JSON.stringify({ ...body, model: upstreamModel });
      let target = channel.provider.target(spec.endpoint, upstreamModel, channel);
      if (ctx.priority !== undefined && channel.provider.relaysPriority)
        target = { ...target, headers: { ...target.headers, [PRIORITY_HEADER]: ctx.priority } };
      const answer = await deps.upstream.postForText(target, sent, ctx.signal);
      return { text: answer.text, json: usageOnly(answer.text) ?? parseAnswer(answer.text) };
    });
    Object.assign(result, { model: a.model, channel: a.channel, upstreamModel: a.upstreamModel, attempts: a.attempts });
    const reported = spec.upstreamTokens(a.value.json);
    result.promptTokens = reported ?? spec.localTokens(body);
    result.usageSource = reported === undefined ? 'local' : 'upstream';
    responder.json(200, a.value.text);
  } catch (err) {
    throw recordFailure(result, err, ctx, sent || bodyText);
  } finally {
    run.finish(result);
  }
}

/**
 * For a large answer (embeddings of many inputs run to megabytes of numbers)
 * only its trailing `"usage":{...}` is parsed: parsing it all on the relay's
 * thread, just to read the usage, would stall every other request. Returns
 * undefined when the answer is small or does not end that way.
 */
export function usageOnly(text: string): { usage: unknown } | undefined {
  if (text.length < 64 * 1024) return undefined;
  const at = text.lastIndexOf('"usage"');
  const open = text.indexOf('{', at);
  if (at < 0 || open < 0 || text.length - at > 4096 || !/^\s*"usage"\s*:\s*$/.test(text.slice(at, open))) return undefined;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      // Skip a string (keys, and any string value), escapes included.
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      if (!/^\s*}\s*$/.test(text.slice(i + 1))) return undefined;
      try {
        return { usage: JSON.parse(text.slice(open, i + 1)) };
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
