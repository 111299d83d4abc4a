// Relaying one streamed chat completion from one channel. Chunks are passed
// through byte-for-byte (re-framed as `data: …\n\n`), so the OpenAI chunk
// shape reaches the client exactly as the upstream sent it. Until the first
// chunk with content arrives nothing is sent to the client, which is what
// makes a retry on another channel possible (and invisible) before that point.
import { createSseReader, sseData, sseEvent, SSE_DONE } from '@kbchat/shared';
import { errors, type GatewayError } from '../errors.js';
import type { Responder } from './context.js';
import { tokenCount } from './run.js';
import { ChunkDecoder, plainFramesEnd, RawFrames } from '../http1/sse-frames.js';
import { UpstreamFailure } from './upstream.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface StreamOutcome {
  /** Usage the upstream reported, if any. */
  usage?: Usage;
  /** Text of the parsed chunks (content, refusal, tool-call arguments); see answerText. */
  text: string;
  /** Chunks passed through without parsing (data, or whole frames); their text is only needed without upstream usage. */
  unparsed: (string | RawFrames)[];
  ttftMs?: number;
  /** An error after the stream had started (it was written into the stream). */
  error?: GatewayError;
  /** That error says nothing against the channel (a provider's overload reported inside its stream). */
  errorIsLoad?: boolean;
  /** The upstream stream had no content at all. */
  empty: boolean;
}

interface ChunkMeta {
  id?: string;
  created?: number;
  model?: string;
  system_fingerprint?: string | null;
}

function hasContent(chunk: any): boolean {
  const choices = chunk?.choices;
  if (!Array.isArray(choices)) return false;
  for (const c of choices) {
    const d = c?.delta;
    if (!d) continue;
    if ((typeof d.content === 'string' && d.content) || d.tool_calls || d.refusal || d.reasoning_content || d.function_call) return true;
  }
  return false;
}

const NULL_USAGE_TAIL = ',"usage":null}';
const NULL_USAGE_FRAME_END = `${NULL_USAGE_TAIL}\n\n`;
/** A chunk that may carry a usage object or an error must be parsed. */
const MAY_MATTER = /"(usage"\s*:\s*\{|error"\s*:)/;
/** The same, to find the first such place in a run of frames. */
const MAY_MATTER_AT = new RegExp(MAY_MATTER.source, 'g');

/**
 * The chunk without its `"usage":null`: once include_usage is on, upstreams add
 * it to every chunk, and a client that did not ask must not see the gateway's request.
 */
function withoutNullUsage(data: string, chunk?: any): string {
  if (data.endsWith(NULL_USAGE_TAIL)) return data.slice(0, -NULL_USAGE_TAIL.length) + '}';
  try {
    const { usage: _drop, ...rest } = chunk ?? JSON.parse(data);
    return JSON.stringify(rest);
  } catch {
    return data; // not JSON: pass it on as it came
  }
}

/**
 * The text of a chat answer's choices (content, refusal, reasoning, tool-call
 * names and arguments), from `delta`s of stream chunks or whole `message`s.
 */
export function choicesText(choices: unknown, part: 'delta' | 'message'): string {
  let out = '';
  if (!Array.isArray(choices)) return out;
  for (const c of choices) {
    const d = c?.[part];
    if (!d) continue;
    if (typeof d.content === 'string') out += d.content;
    if (typeof d.refusal === 'string') out += d.refusal;
    if (typeof d.reasoning_content === 'string') out += d.reasoning_content;
    if (!Array.isArray(d.tool_calls)) continue;
    for (const t of d.tool_calls) {
      if (typeof t?.function?.name === 'string') out += t.function.name;
      if (typeof t?.function?.arguments === 'string') out += t.function.arguments;
    }
  }
  return out;
}

const chunkText = (chunk: any): string => choicesText(chunk?.choices, 'delta');

/** A responder that shapes the answer for another API (relay/messages.ts), which has its own error event. */
export interface StreamErrorResponder extends Responder {
  endWithError(error: GatewayError, requestId: string, before: string): void;
}

/** Ends an open stream with an error event (the only way an error can still reach the client), after `before`. */
export function endStreamWithError(responder: Responder, error: GatewayError, requestId: string, before = ''): void {
  if ('endWithError' in responder) return (responder as StreamErrorResponder).endWithError(error, requestId, before);
  responder.end(before + sseData(error.toBody(requestId)));
}

/** The whole answer's text, for counting tokens locally. */
export function answerText(out: StreamOutcome): string {
  let text = out.text;
  const add = (data: string) => {
    try {
      text += chunkText(JSON.parse(data));
    } catch {
      /* not JSON: no text to count */
    }
  };
  for (const item of out.unparsed) {
    if (typeof item === 'string') add(item);
    else for (const data of item.data()) add(data);
  }
  return text;
}

export interface PipeOptions {
  responder: Responder;
  requestId: string;
  startedAt: number;
  /** Aborted when the client goes away. */
  signal: { readonly aborted: boolean };
  /** The client asked for a usage chunk. */
  clientWantsUsage: boolean;
  /** Count usage locally when the upstream reports none (called at the end). */
  localUsage: (text: string) => Usage;
}

/**
 * Reads an upstream SSE response. Throws UpstreamFailure when the stream breaks
 * before anything was sent to the client (the caller may retry elsewhere);
 * after that, errors are written into the stream and returned.
 */
export async function pipeChatStream(
  stream: (onChunk: (chunk: Buffer) => void | Promise<void>) => Promise<unknown>,
  opts: PipeOptions,
): Promise<StreamOutcome> {
  const { responder } = opts;
  const out: StreamOutcome = { text: '', unparsed: [], empty: true };
  const meta: ChunkMeta = {};
  // Frames wait in `held` until the first content (nothing sent yet, so a retry
  // stays possible), then in `outgoing`, which goes out as one socket write per
  // turn of the event loop: many small chunks cost a few syscalls, not one each.
  let held = '';
  let outgoing = '';
  // Each event is handled as the parser finds it (a throw leaves feed() too).
  const reader = createSseReader((data, event) => handle(data, event));
  const decoder = new ChunkDecoder();
  // The parser holds nothing (the last text it was fed ended an event), so a
  // read of whole frames may skip it.
  let atBoundary = false;

  const emit = (frame: string) => {
    if (responder.started) outgoing += frame;
    else held += frame;
  };

  const handle = (data: string, event?: string) => {
    if (data === '[DONE]') return;
    // Once the answer flows, most chunks need no parsing: only those that may
    // carry usage or an error do (a false match just takes the full path).
    // Their text is counted later, and only if the upstream reports no usage.
    if (!out.empty && !MAY_MATTER.test(data)) {
      if (!opts.clientWantsUsage && data.includes('"usage":null')) {
        data = withoutNullUsage(data);
      }
      out.unparsed.push(data);
      emit(event ? sseEvent(event, data) : sseData(data));
      return;
    }
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      emit(event ? sseEvent(event, data) : sseData(data));
      return;
    }
    if (meta.id === undefined && chunk && typeof chunk === 'object') {
      meta.id = chunk.id;
      meta.created = chunk.created;
      meta.model = chunk.model;
      meta.system_fingerprint = chunk.system_fingerprint;
    }
    if (chunk?.usage && typeof chunk.usage === 'object') {
      out.usage = { prompt_tokens: tokenCount(chunk.usage.prompt_tokens), completion_tokens: tokenCount(chunk.usage.completion_tokens) };
      // The gateway asked for usage on the client's behalf: keep the usage-only chunk to itself.
      if (!opts.clientWantsUsage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return;
    } else if (chunk?.usage === null && !opts.clientWantsUsage) {
      data = withoutNullUsage(data, chunk);
    }
    if (chunk?.error) {
      // Some upstreams report failures inside a 200 stream.
      if (!responder.started) throw new UpstreamFailure('status', errors.badResponseStatus(502, chunk.error.message ?? JSON.stringify(chunk.error)), 502);
    }
    out.text += chunkText(chunk);
    if (out.empty && hasContent(chunk)) {
      out.empty = false;
      out.ttftMs = Date.now() - opts.startedAt;
      responder.startStream();
      outgoing = held;
      held = '';
    }
    emit(event ? sseEvent(event, data) : sseData(data));
  };

  const feed = (text: string) => {
    reader.feed(text);
    atBoundary = text.endsWith('\n\n');
  };

  // Plain frames (see sse-frames.ts) go out as one block, the same bytes as
  // event by event; a `"usage":null` elsewhere than at a chunk's end sends
  // the block through the parser after all.
  const passFrames = (frames: string) => {
    let sent = frames;
    if (!opts.clientWantsUsage && sent.includes('"usage":null')) {
      sent = sent.replaceAll(NULL_USAGE_FRAME_END, '}\n\n');
      if (sent.includes('"usage":null')) return feed(frames);
    }
    out.unparsed.push(new RawFrames(sent));
    emit(sent);
  };

  // A read is taken event by event until the answer flows (feeding the
  // parser in pieces that end at event boundaries is the same to it), then
  // in runs of plain frames up to the next frame that may matter.
  const onText = (text: string) => {
    let mattersAt = -1;
    for (let at = 0; at < text.length;) {
      if (!out.empty && atBoundary) {
        if (mattersAt < at) {
          MAY_MATTER_AT.lastIndex = at;
          mattersAt = MAY_MATTER_AT.exec(text)?.index ?? text.length;
        }
        const end = plainFramesEnd(text, at, mattersAt);
        if (end > at) {
          passFrames(text.slice(at, end));
          at = end;
          continue;
        }
      }
      const next = text.indexOf('\n\n', at);
      const stop = next < 0 ? text.length : next + 2;
      feed(at === 0 && stop === text.length ? text : text.slice(at, stop));
      at = stop;
    }
  };

  const takeOutgoing = (): string => {
    const text = outgoing;
    outgoing = '';
    return text;
  };
  const send = (): void | Promise<void> => {
    if (outgoing) return responder.write(takeOutgoing());
  };

  // Frames of upstream reads that arrive in the same turn of the event loop go
  // out together on the next one; while the client's socket is full, the
  // upstream is paused (the promise returned to postStream).
  let scheduled: NodeJS.Immediate | undefined;
  let blocked: Promise<void> | undefined;
  const flushSoon = () => {
    scheduled = undefined;
    const pending = send();
    if (pending) blocked = pending.then(() => void (blocked = undefined));
  };

  try {
    await stream((part) => {
      onText(decoder.decode(part));
      if (outgoing && !scheduled) scheduled = setImmediate(flushSoon);
      return blocked;
    });
    if (scheduled) {
      clearImmediate(scheduled);
      scheduled = undefined;
    }
    await blocked;
  } catch (err) {
    if (scheduled) clearImmediate(scheduled);
    if (err instanceof UpstreamFailure) throw err;
    // A client that went away aborts the upstream read too: no upstream fault.
    const error = opts.signal.aborted ? errors.clientClosed() : errors.streamDropped((err as Error).message || String(err));
    if (!responder.started) throw new UpstreamFailure('dropped', error);
    out.error = error;
    await blocked;
    endStreamWithError(responder, error, opts.requestId, takeOutgoing());
    return out;
  }
  if (out.empty) return out;
  // What is left, the usage chunk if the gateway makes it, [DONE] and the
  // end of the answer go out in one socket write.
  let tail = takeOutgoing();
  if (opts.clientWantsUsage && !out.usage) {
    const usage = opts.localUsage(answerText(out));
    tail += sseData({
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      system_fingerprint: meta.system_fingerprint ?? null,
      choices: [],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  }
  responder.end(tail + SSE_DONE);
  return out;
}

/** Turns a non-stream completion into the chunks a stream would have carried. */
export function completionToChunks(body: any, includeUsage: boolean): string[] {
  const base = { id: body.id, object: 'chat.completion.chunk', created: body.created, model: body.model, system_fingerprint: body.system_fingerprint ?? null };
  const frames: string[] = [];
  for (const choice of body.choices ?? []) {
    const msg = choice.message ?? {};
    const index = choice.index ?? 0;
    frames.push(sseData({ ...base, choices: [{ index, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }] }));
    if (msg.content) frames.push(sseData({ ...base, choices: [{ index, delta: { content: msg.content }, logprobs: null, finish_reason: null }] }));
    if (msg.refusal) frames.push(sseData({ ...base, choices: [{ index, delta: { refusal: msg.refusal }, logprobs: null, finish_reason: null }] }));
    if (Array.isArray(msg.tool_calls) && msg.tool_calls.length) {
      const calls = msg.tool_calls.map((t: any, i: number) => ({ index: i, id: t.id, type: t.type ?? 'function', function: t.function }));
      frames.push(sseData({ ...base, choices: [{ index, delta: { tool_calls: calls }, logprobs: null, finish_reason: null }] }));
    }
    frames.push(sseData({ ...base, choices: [{ index, delta: {}, logprobs: null, finish_reason: choice.finish_reason ?? 'stop' }] }));
  }
  if (includeUsage && body.usage) frames.push(sseData({ ...base, choices: [], usage: body.usage }));
  frames.push(SSE_DONE);
  return frames;
}
