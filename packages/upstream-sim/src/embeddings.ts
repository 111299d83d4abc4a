// POST /v1/embeddings (sim-embed-<D>, sim-embed-raw-<D>) and POST /v1/rerank (sim-rerank).
import type { ServerResponse } from 'node:http';
import { errorJson, modelNotFound, send, sendJson, sleep } from './http.js';
import { baseModel } from './models.js';
import { embed, float32Base64, fnv1a, overlapScore, tokenCount } from './text.js';
import type { EmbeddingsBody, RerankBody, SimConfig } from './types.js';

const EMBED_MODEL = /^sim-embed(-raw)?(?:-(\d+))?$/;
const ERR_INPUT = errorJson("'input' must be a string or an array of strings", 'invalid_request_error', null, 'input');
const ERR_TOO_MANY = errorJson("'input' has more than 2048 items", 'invalid_request_error', null, 'input');

export async function embeddings(res: ServerResponse, body: EmbeddingsBody, cfg: SimConfig): Promise<void> {
  const m = EMBED_MODEL.exec(baseModel(body.model));
  if (!m) return modelNotFound(res, body.model);
  const dims = Number(m[2] || 384);
  const normalise = !m[1]; // sim-embed-raw-* is deliberately not normalised (scores above 1)
  const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
  if (inputs.length === 0 || inputs.some((x) => typeof x !== 'string')) return sendJson(res, 400, ERR_INPUT);
  if (inputs.length > 2048) return sendJson(res, 400, ERR_TOO_MANY);
  if (cfg.embedDelayMs) {
    await sleep(cfg.embedDelayMs);
    if (res.destroyed) return;
  }
  const asBase64 = body.encoding_format === 'base64';
  let tokens = 0;
  const data = (inputs as string[]).map((text, index) => {
    tokens += tokenCount(text);
    const v = embed(text, dims, normalise);
    return { object: 'embedding', index, embedding: asBase64 ? float32Base64(v) : v };
  });
  send(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

export function rerank(res: ServerResponse, body: RerankBody): void {
  if (baseModel(body.model) !== 'sim-rerank') return modelNotFound(res, body.model);
  const docs = (body.documents || []).map((d) => (typeof d === 'string' ? d : ((d as { text?: unknown } | null | undefined)?.text ?? '')));
  // Array.prototype.sort is stable, so equal scores keep document order.
  const results = docs
    .map((d, index) => ({ index, relevance_score: overlapScore(body.query || '', d) }))
    .sort((a, b) => b.relevance_score - a.relevance_score)
    .slice(0, body.top_n || docs.length);
  let inputTokens = tokenCount(body.query);
  for (const d of docs) inputTokens += tokenCount(d);
  send(res, 200, {
    id: `rerank-${fnv1a(JSON.stringify(body)).toString(16)}`,
    results,
    meta: { tokens: { input_tokens: inputTokens } },
  });
}
