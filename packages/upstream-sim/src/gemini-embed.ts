// Gemini embeddings: :embedContent and :batchEmbedContents on gemini-sim-embed-<D>.
// Like gemini-embedding-001, a full-size vector (D dims, default 768) is
// L2-normalised, and one cut short with outputDimensionality is NOT (its first
// N values as they are; Google asks callers to normalise those themselves).
// No token counts come back, as with Google's embeddings.
import type { ServerResponse } from 'node:http';
import { googleError } from './http.js';
import { embed } from './text.js';

export const EMBED_MODEL = /^gemini-sim-embed(?:-(\d+))?$/;
const MAX_BATCH = 100;

type Request = { model?: unknown; content?: { parts?: { text?: unknown }[] }; outputDimensionality?: unknown };

/** The vector of one request, or an error message for it. */
function vector(model: string, r: Request, at: string): number[] | string {
  const full = Number(EMBED_MODEL.exec(model)?.[1] || 768);
  const parts = r?.content?.parts;
  if (!Array.isArray(parts) || parts.length === 0 || parts.some((p) => typeof p?.text !== 'string')) {
    return `* ${at}content.parts: must be a non-empty list of text parts\n`;
  }
  const n = r.outputDimensionality;
  if (n !== undefined && (!Number.isInteger(n) || (n as number) < 1 || (n as number) > full)) {
    return `* ${at}output_dimensionality: must be between 1 and ${full}\n`;
  }
  const v = embed(parts.map((p) => p.text).join(' '), full, true);
  return n === undefined ? v : v.slice(0, n as number);
}

function sendJson(res: ServerResponse, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

export function embedContent(res: ServerResponse, model: string, body: Request): void {
  const v = vector(model, body, 'EmbedContentRequest.');
  if (typeof v === 'string') return googleError(res, 400, v);
  sendJson(res, { embedding: { values: v } });
}

export function batchEmbedContents(res: ServerResponse, model: string, body: { requests?: Request[] }): void {
  const requests = body?.requests;
  if (!Array.isArray(requests) || requests.length === 0) return googleError(res, 400, '* BatchEmbedContentsRequest.requests: requests is not specified\n');
  if (requests.length > MAX_BATCH) {
    return googleError(res, 400, `* BatchEmbedContentsRequest.requests: at most ${MAX_BATCH} requests can be in one batch\n`);
  }
  const embeddings: { values: number[] }[] = [];
  for (let i = 0; i < requests.length; i++) {
    if (requests[i]?.model !== `models/${model}`) {
      return googleError(res, 400, `* BatchEmbedContentsRequest.requests[${i}].model: the model of each request must be the batch's model (models/${model})\n`);
    }
    const v = vector(model, requests[i], `BatchEmbedContentsRequest.requests[${i}].`);
    if (typeof v === 'string') return googleError(res, 400, v);
    embeddings.push({ values: v });
  }
  sendJson(res, { embeddings });
}
