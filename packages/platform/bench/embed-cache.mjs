// Embeddings for the bench through the local models' OpenAI-compatible server,
// cached on disk by sha1(model + text) so that re-runs skip the slow part
// (USE-lite embeds ~30-80 texts/s on 2 cores). The cache is one append-only
// file of records: 20-byte sha1, then dims float32 little-endian.
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export class EmbedCache {
  constructor(dir, model, dims) {
    this.model = model;
    this.dims = dims;
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, `${model}-${dims}.bin`);
    this.map = new Map();
    if (existsSync(this.file)) {
      const buf = readFileSync(this.file);
      const rec = 20 + dims * 4;
      for (let off = 0; off + rec <= buf.length; off += rec) {
        const key = buf.toString('hex', off, off + 20);
        const v = new Float32Array(dims);
        for (let i = 0; i < dims; i++) v[i] = buf.readFloatLE(off + 20 + i * 4);
        this.map.set(key, v);
      }
    }
  }
  key(text) {
    return createHash('sha1').update(this.model).update('\0').update(text).digest('hex');
  }
  get(text) {
    return this.map.get(this.key(text));
  }
  put(texts, vectors) {
    const parts = [];
    texts.forEach((t, i) => {
      const key = this.key(t);
      if (this.map.has(key)) return;
      this.map.set(key, vectors[i]);
      parts.push(Buffer.from(key, 'hex'), Buffer.from(vectors[i].buffer, vectors[i].byteOffset, vectors[i].byteLength));
    });
    if (parts.length) appendFileSync(this.file, Buffer.concat(parts));
  }
}

export async function embedRemote(baseUrl, model, texts) {
  // Small batches (64): a long one on a busy machine can outlast fetch's 300 s header timeout.
  const res = await fetch(`${baseUrl}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, input: texts, encoding_format: 'base64' }),
  });
  if (!res.ok) throw new Error(`embeddings ${res.status}: ${await res.text()}`);
  const body = await res.json();
  return body.data
    .sort((a, b) => a.index - b.index)
    .map((d) => {
      const b = Buffer.from(d.embedding, 'base64');
      return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    });
}

/** Vectors for every text (empty texts get none: the model drops them), embedding only what the cache lacks. */
export async function embedAll(cache, baseUrl, texts, { batch = 64, concurrency = 2, onProgress } = {}) {
  const missing = [...new Set(texts.filter((t) => t && !cache.get(t)))];
  // `concurrency` requests in flight keep every embedding worker busy (LOCAL_EMBED_WORKERS).
  let next = 0,
    done = 0;
  const lane = async () => {
    while (next < missing.length) {
      const part = missing.slice(next, (next += batch));
      cache.put(part, await embedRemote(baseUrl, cache.model, part));
      onProgress?.((done += part.length), missing.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { embedded: missing.length, vectors: texts.map((t) => cache.get(t)) };
}
