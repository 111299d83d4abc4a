// POST /v1/embeddings for local-embed: OpenAI's request and response shapes.
import type { ServerResponse } from 'node:http';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { countTextTokens } from '@kbchat/shared';
import { invalidField, LocalModelError } from '../http-util.js';
import { LOCAL_EMBED_MODEL } from '../models.js';
import type { EmbedPriority } from './embed-lanes.js';
import type { EmbedPool } from './embed-pool.js';
import { prepareForEmbedding } from './prepare.js';

export interface EmbeddingLimits {
  /** Most inputs in one request (OpenAI's is 2048). */
  maxInputs: number;
  /** Longest single input in characters. */
  maxInputChars: number;
  /**
   * Requests of at most this many inputs are interactive (a search's question
   * and its extension queries: at most 6 from the platform) and go ahead of
   * larger ones (indexing sends 64 a call), unless PRIORITY_HEADER says.
   */
  interactiveMaxInputs: number;
}

/**
 * The header a caller states its lane in (`bulk`: indexing; `interactive`:
 * someone waits). The platform marks its indexing calls, so that a small
 * indexing batch does not pass as a question; without it the size decides.
 */
export const PRIORITY_HEADER = 'x-kbchat-priority';

/** The lane a request asked for in PRIORITY_HEADER; undefined when it did not say. 400 naming the header on another value. */
export function declaredPriority(value: string | string[] | undefined): EmbedPriority | undefined {
  if (value === undefined) return undefined;
  const v = (Array.isArray(value) ? value.join(',') : value).trim().toLowerCase();
  if (v === 'bulk' || v === 'interactive') return v;
  throw new LocalModelError(
    400,
    `Invalid 'X-Kbchat-Priority' header: must be 'bulk' or 'interactive', got ${JSON.stringify(value)}.`,
    'invalid_header',
    'X-Kbchat-Priority',
  );
}

export async function handleEmbeddings(
  body: Record<string, unknown>,
  res: ServerResponse,
  pool: EmbedPool,
  limits: EmbeddingLimits,
  declared?: EmbedPriority,
): Promise<void> {
  const inputs = readInputs(body.input, limits);
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') {
    throw invalidField('encoding_format', `Invalid 'encoding_format': must be 'float' or 'base64', got ${JSON.stringify(format)}.`);
  }
  if (body.dimensions !== undefined && body.dimensions !== null && body.dimensions !== 512) {
    throw invalidField('dimensions', `Invalid 'dimensions': ${LOCAL_EMBED_MODEL} produces 512-dimensional vectors only.`);
  }

  const priority = declared ?? (inputs.length <= limits.interactiveMaxInputs ? 'interactive' : 'bulk');
  const { vectors, json } = await pool.embed(inputs.map(prepareForEmbedding), priority);

  // The vectors' JSON text comes from the worker; counting tokens is done a
  // slice at a time, yielding in between, so that a 2048-input request cannot
  // hold the event loop for long.
  let tokens = 0;
  let workSinceYield = 0;
  const parts: string[] = [];
  for (let i = 0; i < vectors.length; i++) {
    tokens += countTextTokens(inputs[i]);
    const embedding = format === 'base64' ? `"${toBase64(vectors[i]!)}"` : json[i];
    parts.push(`{"object":"embedding","index":${i},"embedding":${embedding}}`);
    workSinceYield += inputs[i].length + 1_000;
    if (workSinceYield > 100_000) {
      workSinceYield = 0;
      await yieldToLoop();
    }
  }
  const text =
    `{"object":"list","data":[${parts.join(',')}],"model":${JSON.stringify(LOCAL_EMBED_MODEL)},` +
    `"usage":{"prompt_tokens":${tokens},"total_tokens":${tokens}}}`;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Little-endian float32 bytes, as OpenAI's base64 encoding_format. */
function toBase64(vector: Float32Array): string {
  if (LITTLE_ENDIAN) return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

function readInputs(input: unknown, limits: EmbeddingLimits): string[] {
  if (input === undefined || input === null) throw invalidField('input', "Missing 'input': a string or an array of strings.");
  if (Array.isArray(input) && input.length > 0 && typeof input[0] === 'number') {
    throw invalidField('input', `Invalid 'input': ${LOCAL_EMBED_MODEL} takes text, not token arrays.`);
  }
  const list = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(list)) throw invalidField('input', "Invalid 'input': must be a string or an array of strings.");
  if (list.length === 0) throw invalidField('input', "Invalid 'input': must not be an empty array.");
  if (list.length > limits.maxInputs) {
    throw invalidField('input', `Invalid 'input': ${list.length} items, more than the ${limits.maxInputs} allowed in one request.`);
  }
  const single = typeof input === 'string';
  list.forEach((item, i) => {
    const where = single ? 'input' : `input[${i}]`;
    if (typeof item !== 'string') throw invalidField('input', `Invalid '${where}': must be a string.`);
    if (item.trim() === '') {
      throw new LocalModelError(400, `Invalid '${where}': must not be empty or only whitespace.`, 'empty_input', 'input');
    }
    if (item.length > limits.maxInputChars) {
      throw new LocalModelError(
        413,
        `Invalid '${where}': ${item.length} characters, more than the ${limits.maxInputChars} allowed; ` +
          `${LOCAL_EMBED_MODEL} reads only about the first 128 tokens anyway.`,
        'input_too_large',
        'input',
      );
    }
  });
  return list as string[];
}
