// Gemini's SSE frames (each a whole GenerateContentResponse, no end marker)
// -> OpenAI chunks, incrementally. Text parts become `content` deltas; each
// functionCall part arrives whole and becomes one tool_calls delta (name and
// all arguments). A frame with finishReason gives the finish chunk; the usage
// chunk waits for the end of the stream, since usageMetadata may still come
// after it. A blocked prompt ends the translation with `failure` set.
import { errors } from '../../errors.js';
import { ChunkFactory, nowSeconds, parseJson, SseFeed, type ChatCompletionChunk, type WireContext, type WireStream } from '../wire.js';
import { blockedPrompt, geminiFailure } from './errors.js';
import { callId, finishReasonOf, usageOf } from './response.js';

export class GeminiStream implements WireStream {
  failure: WireStream['failure'];
  private readonly feed = new SseFeed((data) => this.onFrame(data));
  private factory: ChunkFactory | undefined;
  private out: ChatCompletionChunk[] = [];
  /** Calls seen so far per candidate, for their tool_calls `index`. */
  private readonly calls = new Map<number, number>();
  private readonly finished = new Set<number>();
  private usage: unknown;

  constructor(private readonly ctx: WireContext) {}

  push(part: Uint8Array | string): ChatCompletionChunk[] {
    if (!this.failure) this.feed.push(part);
    const out = this.out;
    this.out = [];
    return out;
  }

  end(): ChatCompletionChunk[] {
    if (this.failure) return [];
    if (!this.factory || this.finished.size === 0) {
      throw geminiFailure(502, '', errors.streamDropped('the Gemini stream ended before a finishReason'));
    }
    // No usageMetadata at all: no usage chunk, so that the relay counts tokens itself rather than bill zero.
    return this.usage ? [this.factory.usage(usageOf(this.usage))] : [];
  }

  private onFrame(data: string): void {
    if (this.failure) return;
    const r = parseJson(data);
    if (!r || typeof r !== 'object') return;
    if (r.error) {
      this.failure = geminiFailure(typeof r.error.code === 'number' ? r.error.code : 500, data);
      return;
    }
    const candidates: any[] = Array.isArray(r.candidates) ? r.candidates : [];
    if (candidates.length === 0 && r.promptFeedback?.blockReason) {
      this.failure = blockedPrompt(r.promptFeedback.blockReason);
      return;
    }
    if (r.usageMetadata) this.usage = r.usageMetadata;
    let f = this.factory;
    if (!f) {
      f = this.factory = new ChunkFactory(`chatcmpl-${r.responseId ?? 'gemini'}`, this.ctx.model, this.ctx.created ?? nowSeconds());
      this.out.push(f.chunk({ role: 'assistant', content: '' }));
    }
    for (const [i, c] of candidates.entries()) {
      const index = typeof c?.index === 'number' ? c.index : i;
      if (index > 0 && !this.calls.has(index)) this.out.push(f.chunk({ role: 'assistant', content: '' }, null, index));
      let seen = this.calls.get(index) ?? 0;
      this.calls.set(index, seen);
      for (const p of Array.isArray(c?.content?.parts) ? c.content.parts : []) {
        if (typeof p?.text === 'string' && !p.thought) {
          if (p.text) this.out.push(f.chunk({ content: p.text }, null, index));
        } else if (p?.functionCall) {
          const id = typeof p.functionCall.id === 'string' ? p.functionCall.id : callId(r.responseId, index, seen);
          const fn = { name: String(p.functionCall.name), arguments: JSON.stringify(p.functionCall.args ?? {}) };
          this.out.push(f.chunk({ tool_calls: [{ index: seen, id, type: 'function', function: fn }] }, null, index));
          this.calls.set(index, ++seen);
        }
      }
      if (c?.finishReason && !this.finished.has(index)) {
        this.finished.add(index);
        this.out.push(f.chunk({}, finishReasonOf(c.finishReason, seen > 0), index));
      }
    }
  }
}
