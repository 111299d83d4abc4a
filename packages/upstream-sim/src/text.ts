// Deterministic text helpers: hashing, word splitting, token estimates, lexical
// embeddings and overlap scores. Same numbers as the reference simulator, so
// results stay comparable across the .mjs and TypeScript versions.

/** 32-bit FNV-1a over UTF-16 code units of s[start, end). */
export function fnv1a(s: string, start = 0, end = s.length): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased runs of letters and digits. */
export function words(text: unknown): string[] {
  return String(text).toLowerCase().match(WORD) ?? [];
}

/** Rough token estimate: 1.3 tokens a word. */
export const tokenCount = (text: unknown): number => Math.ceil(words(text).length * 1.3);

/** The text of a message content: a string, or the text parts of an array joined by spaces. */
export function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p: { text?: unknown } | null | undefined) => p?.text ?? '').join(' ');
  return '';
}

/**
 * Lexical embedding: hashed words (weight 1) and character trigrams (weight 0.3),
 * scaled to norm 1 (or norm 3 when not normalised, so scores can exceed 1),
 * rounded to 6 decimals.
 */
export function embed(text: string, dims: number, normalise: boolean): number[] {
  const v = new Float64Array(dims);
  for (const w of words(text)) {
    const h = fnv1a(w);
    v[h % dims] += h & 0x80000000 ? -1 : 1;
    // Trigrams of "#word#", hashed in place rather than sliced (no substrings).
    const padded = `#${w}#`;
    for (let i = 0; i + 3 <= padded.length; i++) {
      const g = fnv1a(padded, i, i + 3);
      v[g % dims] += (g & 0x80000000 ? -1 : 1) * 0.3;
    }
  }
  let n = 0;
  for (let i = 0; i < dims; i++) n += v[i] * v[i];
  n = Math.sqrt(n) || 1;
  const scale = normalise ? 1 / n : 3 / n;
  const out = new Array<number>(dims);
  for (let i = 0; i < dims; i++) out[i] = Math.round(v[i] * scale * 1e6) / 1e6;
  return out;
}

/** Little-endian float32 bytes in base64, as OpenAI's encoding_format "base64". */
export function float32Base64(v: number[]): string {
  const f = Float32Array.from(v);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

/** Share of the query's distinct words that appear in the document. */
export function overlapScore(query: unknown, doc: unknown): number {
  const q = new Set(words(query));
  if (q.size === 0) return 0;
  let hit = 0;
  for (const w of new Set(words(doc))) if (q.has(w)) hit++;
  return hit / q.size;
}
