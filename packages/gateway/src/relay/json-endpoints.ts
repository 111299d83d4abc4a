// POST /v1/embeddings and POST /v1/rerank: one JSON request, one JSON answer,
// relayed through the same attempts, billing and logs as chat.
import { countInputTokens, countTextTokens, embeddingsRequestSchema, parseWith, rerankRequestSchema } from '@kbchat/shared';
import type { z } from 'zod';
import { errors } from '../errors.js';
import type { Endpoint } from '../providers/index.js';
import { withAttempts } from './attempts.js';
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

export const relayEmbeddings = (deps: RelayDeps, ctx: RelayContext, raw: unknown, r: Responder) => relayJson(embeddings, deps, ctx, raw, r);
export const relayRerank = (deps: RelayDeps, ctx: RelayContext, raw: unknown, r: Responder) => relayJson(rerank, deps, ctx, raw, r);

async function relayJson(spec: JsonEndpoint, deps: RelayDeps, ctx: RelayContext, raw: unknown, responder: Responder): Promise<void> {
  const parsed = parseWith(spec.schema, raw);
  if (!parsed.ok) throw errors.badField(parsed.problem.field, parsed.problem.message);
  const body = parsed.value;
  const bodyText = ctx.rawBody ?? JSON.stringify(body);
  const run = await RelayRun.begin(deps, ctx, spec.endpoint, body.model, false, Math.ceil(bodyText.length / 2), 0);
  const result: RunResult = { attempts: 0, promptTokens: 0, completionTokens: 0, usageSource: 'none', status: 200 };
  let sent = '';
  try {
    const a = await withAttempts(deps, ctx, spec.endpoint, body.model, async (channel, upstreamModel) => {
      sent = upstreamModel === body.model ? bodyText : JSON.stringify({ ...body, model: upstreamModel });
      return deps.upstream.postJson(channel.provider.target(spec.endpoint, upstreamModel, channel), sent, ctx.signal);
    });
    Object.assign(result, { channel: a.channel, upstreamModel: a.upstreamModel, attempts: a.attempts });
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
