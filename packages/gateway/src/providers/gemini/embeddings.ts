// OpenAI embeddings <-> Gemini batchEmbedContents. At most 100 texts a call
// (Gemini's limit), so a request becomes one body per 100 inputs. `dimensions`
// is outputDimensionality. Gemini normalises only full-size vectors (one cut
// short by outputDimensionality is not); OpenAI's are unit vectors and the
// platform's cosine search assumes so, so every vector is L2-normalised here.
// Gemini reports no tokens for embeddings: usage is counted locally.
import { countInputTokens } from '@kbchat/shared';
import { errors } from '../../errors.js';
import type { EmbeddingsResponse, WireContext } from '../wire.js';

export const GEMINI_EMBED_BATCH = 100;

function inputsOf(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((x) => typeof x === 'string')) return input;
  throw errors.badField('input', "Invalid 'input': a Gemini channel embeds text only (a string or an array of strings)");
}

export function geminiEmbeddingRequests(body: Record<string, any>, upstreamModel: string): Record<string, unknown>[] {
  const inputs = inputsOf(body.input);
  const model = `models/${upstreamModel}`;
  const dims = typeof body.dimensions === 'number' ? { outputDimensionality: body.dimensions } : {};
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < inputs.length; i += GEMINI_EMBED_BATCH) {
    out.push({ requests: inputs.slice(i, i + GEMINI_EMBED_BATCH).map((text) => ({ model, content: { parts: [{ text }] }, ...dims })) });
  }
  return out;
}

function normalised(values: unknown): number[] {
  const v = Array.isArray(values) ? values.map(Number) : [];
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return n > 0 ? v.map((x) => x / n) : v;
}

function base64Of(v: number[]): string {
  const f = Float32Array.from(v);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

/** The answers of the batches, in order, as one OpenAI embeddings list. */
export function geminiEmbeddingResponse(answers: unknown[], body: Record<string, any>, ctx: WireContext): EmbeddingsResponse {
  const vectors = answers.flatMap((a: any) => (Array.isArray(a?.embeddings) ? a.embeddings : []));
  const asBase64 = body.encoding_format === 'base64';
  const tokens = countInputTokens(body.input);
  return {
    object: 'list',
    data: vectors.map((e: any, index: number) => {
      const v = normalised(e?.values);
      return { object: 'embedding', index, embedding: asBase64 ? base64Of(v) : v };
    }),
    model: ctx.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
