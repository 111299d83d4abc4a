// What a replay answered, as a person reads it: the answer's text (a stream's
// payloads joined), or the error's message, whatever the endpoint.
import type { ReplayResult } from '@kbchat/contracts';

export interface ReadAnswer {
  ok: boolean;
  /** The answer's text, or the error's message; empty when the answer has no text (an embedding). */
  text: string;
  /** What the answer holds when it has no text: "3 embeddings of 8 dimensions". */
  summary?: { kind: 'embeddings'; count: number; dims: number } | { kind: 'rerank'; count: number };
}

type Json = Record<string, any>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function errorMessage(v: unknown): string | undefined {
  if (!isObject(v) || !v.error) return undefined;
  return typeof v.error === 'string' ? v.error : typeof v.error.message === 'string' ? v.error.message : JSON.stringify(v.error);
}

/** A chat message's text; tool calls as their names and arguments. */
function messageText(m: Json | undefined): string {
  if (!m) return '';
  const parts: string[] = [];
  if (typeof m.content === 'string') parts.push(m.content);
  if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) parts.push(`${c?.function?.name ?? 'tool'}(${c?.function?.arguments ?? ''})`);
  return parts.join('\n');
}

function jsonAnswer(status: number, body: unknown): ReadAnswer {
  const error = errorMessage(body);
  if (status >= 400 || error) return { ok: false, text: error ?? (typeof body === 'string' ? body : JSON.stringify(body)) };
  if (typeof body === 'string') return { ok: true, text: body };
  if (isObject(body) && Array.isArray(body.choices)) return { ok: true, text: messageText(body.choices[0]?.message) };
  if (isObject(body) && Array.isArray(body.data) && Array.isArray(body.data[0]?.embedding)) {
    return { ok: true, text: '', summary: { kind: 'embeddings', count: body.data.length, dims: body.data[0].embedding.length } };
  }
  if (isObject(body) && Array.isArray(body.results)) return { ok: true, text: '', summary: { kind: 'rerank', count: body.results.length } };
  return { ok: true, text: '' };
}

/** A stream's answer: the deltas' text joined; an error payload (the stream failed midway) makes it a failure. */
function streamAnswer(payloads: unknown[]): ReadAnswer {
  let text = '';
  for (const p of payloads) {
    const error = errorMessage(p);
    if (error) return { ok: false, text: text ? `${error}\n\n${text}` : error };
    if (!isObject(p) || !Array.isArray(p.choices)) continue;
    const delta = p.choices[0]?.delta;
    if (typeof delta?.content === 'string') text += delta.content;
  }
  return { ok: true, text };
}

export function readAnswer(r: ReplayResult): ReadAnswer {
  return r.stream && Array.isArray(r.response) ? streamAnswer(r.response) : jsonAnswer(r.status, r.response);
}

/** JSON as people read it: indented; text that is not JSON as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
