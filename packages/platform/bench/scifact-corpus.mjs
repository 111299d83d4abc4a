// SciFact (BEIR layout) for the retrieval bench: corpus, queries, qrels, and
// the chunking of abstracts into pieces that fit USE-lite's 128-token window.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function scifactPresent(dir) {
  return existsSync(join(dir, 'corpus.jsonl')) && existsSync(join(dir, 'queries.jsonl'));
}

function readJsonl(file) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

export function loadScifact(dir) {
  const corpus = readJsonl(join(dir, 'corpus.jsonl')).map((d) => ({ id: String(d._id), title: d.title ?? '', text: d.text ?? '' }));
  const queries = new Map(readJsonl(join(dir, 'queries.jsonl')).map((q) => [String(q._id), q.text]));
  const qrels = {};
  for (const split of ['train', 'test']) {
    const file = join(dir, 'qrels', `${split}.tsv`);
    if (!existsSync(file)) continue;
    const rel = new Map();
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [qid, docId, score] = line.trim().split('\t');
      if (!qid || Number(score) <= 0) continue;
      if (!rel.has(qid)) rel.set(qid, new Map());
      rel.get(qid).set(docId, Number(score));
    }
    qrels[split] = rel;
  }
  return { corpus, queries, qrels };
}

/** Only ' ' is a word boundary for USE-lite's tokenizer: collapse the rest. */
export function collapseSpace(text) {
  return text.replace(/\s+/g, ' ').trim();
}

/** Abstracts are sentences joined by spaces: split after . ! ? before a capital, digit or bracket. */
export function splitSentences(text) {
  return collapseSpace(text)
    .split(/(?<=[.!?])\s+(?=[A-Z0-9([])/)
    .filter(Boolean);
}

/**
 * Why our own grouping rather than the platform's markdown chunker: the limit is
 * the embedding model's own tokenizer (128 USE-lite tokens, past which the graph
 * ignores the text), not o200k tokens. Each chunk is the title plus as many whole
 * sentences as fit; a sentence longer than the window alone is its own chunk
 * (the model sees its start).
 */
export function chunkAbstract(doc, countTokens, maxTokens = 128) {
  const title = collapseSpace(doc.title);
  const sentences = splitSentences(doc.text);
  if (sentences.length === 0) return [title];
  const chunks = [];
  let current = [];
  for (const s of sentences) {
    const candidate = [title, ...current, s].join(' ');
    if (current.length > 0 && countTokens(candidate) > maxTokens) {
      chunks.push([title, ...current].join(' '));
      current = [s];
    } else current.push(s);
  }
  if (current.length) chunks.push([title, ...current].join(' '));
  return chunks;
}
