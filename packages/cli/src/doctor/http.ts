// The doctor's requests: JSON in and out, each bounded in time, the gateway's
// request id kept, and a streamed chat completion read into what it carried.
import { createSseReader } from '@kbchat/shared';

export interface Answer {
  status: number;
  json: any;
  text: string;
  requestId?: string;
  ms: number;
}

/** Nothing answered: refused, unreachable, or no answer in time. */
export class NoAnswer extends Error {}

export interface RequestOptions {
  method?: string;
  token?: string;
  body?: unknown;
  timeoutMs: number;
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

async function send(url: string, opts: RequestOptions & { stream?: boolean }): Promise<Response> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await fetch(url, {
      method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
  } catch (err) {
    throw new NoAnswer(describeFetchError(err, opts.timeoutMs));
  }
}

export async function request(url: string, opts: RequestOptions): Promise<Answer> {
  const began = Date.now();
  const res = await send(url, opts);
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new NoAnswer(describeFetchError(err, opts.timeoutMs));
  }
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, requestId: res.headers.get('x-request-id') ?? undefined, ms: Date.now() - began };
}

/** An error answer in the words of whoever gave it: the gateway's OpenAI envelope or the platform's FastGPT one. */
export function errorText(a: Pick<Answer, 'json' | 'text'>): string {
  const j = a.json;
  const message = j?.error?.message ?? j?.message ?? j?.statusText;
  return typeof message === 'string' ? message : a.text.slice(0, 300) || '(empty body)';
}

/** The error's machine code, where the answer has one. */
export function errorCode(a: Pick<Answer, 'json'>): string | undefined {
  const code = a.json?.error?.code ?? a.json?.statusText;
  return typeof code === 'string' ? code : undefined;
}

/** The text with the gateway's request id, unless it already names it (the gateway's error messages do). */
export const withId = (text: string, requestId: string | undefined) => (requestId && !text.includes(requestId) ? `${text} (request id ${requestId})` : text);

export interface StreamedCall {
  id?: string;
  name: string;
  arguments: string;
}

/** What a streamed chat completion carried, or the non-2xx answer that came instead. */
export interface StreamOutcome {
  status: number;
  requestId?: string;
  content: string;
  /** tool_calls deltas joined by index, or the legacy function_call. */
  calls: StreamedCall[];
  finishReason?: string;
  /** An error event inside the stream (the gateway's, after the stream began). */
  streamError?: { message: string; code?: string };
  /** The stream's [DONE] came. */
  done: boolean;
  /** The reading itself failed (connection lost, timeout). */
  readError?: string;
  /** A non-2xx answer. */
  refused?: Answer;
  ms: number;
}

export async function streamChat(url: string, token: string | undefined, body: Record<string, unknown>, timeoutMs: number): Promise<StreamOutcome> {
  const began = Date.now();
  const res = await send(url, { token, body: { ...body, stream: true }, timeoutMs });
  const requestId = res.headers.get('x-request-id') ?? undefined;
  const out: StreamOutcome = { status: res.status, requestId, content: '', calls: [], done: false, ms: 0 };
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    out.refused = { status: res.status, json, text, requestId, ms: Date.now() - began };
    out.ms = Date.now() - began;
    return out;
  }
  const reader = createSseReader((data) => {
    if (data === '[DONE]') return void (out.done = true);
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    if (chunk?.error) {
      out.streamError = { message: String(chunk.error.message ?? JSON.stringify(chunk.error)), code: chunk.error.code };
      return;
    }
    const choice = chunk?.choices?.[0];
    const delta = choice?.delta ?? {};
    if (typeof delta.content === 'string') out.content += delta.content;
    for (const t of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const i = typeof t.index === 'number' ? t.index : 0;
      const call = (out.calls[i] ??= { name: '', arguments: '' });
      if (t.id) call.id = t.id;
      if (t.function?.name) call.name += t.function.name;
      if (t.function?.arguments) call.arguments += t.function.arguments;
    }
    if (delta.function_call) {
      const call = (out.calls[0] ??= { name: '', arguments: '' });
      if (delta.function_call.name) call.name += delta.function_call.name;
      if (delta.function_call.arguments) call.arguments += delta.function_call.arguments;
    }
    if (choice?.finish_reason) out.finishReason = choice.finish_reason;
  });
  const decoder = new TextDecoder();
  try {
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) reader.feed(decoder.decode(part, { stream: true }));
  } catch (err) {
    out.readError = describeFetchError(err, timeoutMs);
  }
  out.ms = Date.now() - began;
  return out;
}

/** Nothing came: no text and no call. */
export const isEmpty = (s: StreamOutcome) => !s.content && s.calls.length === 0;
/** The stream ended without its end: an error event, a lost connection, or no [DONE]. */
export const isBroken = (s: StreamOutcome) => Boolean(s.streamError || s.readError || !s.done);
