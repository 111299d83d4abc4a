// Input preparation for USE-lite (see docs in the package README):
// - its tokenizer splits words only on ' ', so every run of whitespace
//   (newlines, tabs, non-breaking spaces) becomes one ' ';
// - its graph reads only the first 128 of its tokens and every word is at
//   least one token, so words past the 128th can never change the vector: they
//   are cut here to spare the worker tokenizing text it would throw away;
// - an empty string makes the model silently drop a row, so empties never
//   reach it (the route rejects them, the extractive model skips them).
import { EMBED_MAX_MODEL_TOKENS } from '../models.js';

export function prepareForEmbedding(text: string): string {
  const collapsed = text.replace(/\s+/gu, ' ').trim();
  let spaces = 0;
  for (let i = 0; i < collapsed.length; i++) {
    if (collapsed.charCodeAt(i) === 32 && ++spaces === EMBED_MAX_MODEL_TOKENS) return collapsed.slice(0, i);
  }
  return collapsed;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot; // both are unit length
}
