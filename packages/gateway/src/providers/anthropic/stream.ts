// Anthropic's stream events -> OpenAI chunks, incrementally. Text deltas become
// `content` deltas; a tool_use block opens a tool_calls entry (its own
// `index`, counted from 0 over the tool blocks only) and its input_json_delta
// pieces become that entry's `arguments`. message_delta carries the stop
// reason and the output tokens; the finish chunk and the usage chunk go out at
// message_stop. An `error` event ends the translation with `failure` set.
import { errors } from '../../errors.js';
import { ChunkFactory, nowSeconds, parseJson, SseFeed, type ChatCompletionChunk, type FinishReason, type WireContext, type WireStream } from '../wire.js';
import { anthropicFailure } from './errors.js';
import { finishReasonOf, usageOf } from './response.js';

export class AnthropicStream implements WireStream {
  failure: WireStream['failure'];
  private readonly feed = new SseFeed((data, event) => this.onEvent(data, event));
  private factory: ChunkFactory | undefined;
  private out: ChatCompletionChunk[] = [];
  /** Content block index -> tool_calls index, for tool_use blocks. */
  private readonly toolIndex = new Map<number, number>();
  private usage: Record<string, unknown> = {};
  private finish: FinishReason = 'stop';
  private stopped = false;

  constructor(private readonly ctx: WireContext) {}

  push(part: Uint8Array | string): ChatCompletionChunk[] {
    if (!this.failure && !this.stopped) this.feed.push(part);
    const out = this.out;
    this.out = [];
    return out;
  }

  end(): ChatCompletionChunk[] {
    if (!this.stopped && !this.failure) throw anthropicFailure(502, '', undefined, errors.streamDropped('the Anthropic stream ended before message_stop'));
    return [];
  }

  private onEvent(data: string, event?: string): void {
    if (this.failure || this.stopped) return;
    const e = parseJson(data);
    const type = e?.type ?? event;
    if (type === 'error') {
      this.failure = anthropicFailure(e?.error?.type === 'overloaded_error' ? 529 : 500, data);
      return;
    }
    if (type === 'message_start') {
      const m = e.message ?? {};
      this.factory = new ChunkFactory(`chatcmpl-${m.id ?? 'anthropic'}`, this.ctx.model, this.ctx.created ?? nowSeconds());
      this.usage = { ...m.usage };
      this.out.push(this.factory.chunk({ role: 'assistant', content: '' }));
      return;
    }
    const f = this.factory;
    if (!f) return; // nothing before message_start means anything
    if (type === 'content_block_start' && e.content_block?.type === 'tool_use') {
      const index = this.toolIndex.size;
      this.toolIndex.set(e.index, index);
      const b = e.content_block;
      this.out.push(f.chunk({ tool_calls: [{ index, id: String(b.id), type: 'function', function: { name: String(b.name), arguments: '' } }] }));
    } else if (type === 'content_block_start' && e.content_block?.type === 'text' && e.content_block.text) {
      this.out.push(f.chunk({ content: e.content_block.text }));
    } else if (type === 'content_block_delta') {
      const d = e.delta ?? {};
      if (d.type === 'text_delta' && typeof d.text === 'string') this.out.push(f.chunk({ content: d.text }));
      else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string' && d.partial_json) {
        const index = this.toolIndex.get(e.index);
        if (index !== undefined) this.out.push(f.chunk({ tool_calls: [{ index, function: { arguments: d.partial_json } }] }));
      }
    } else if (type === 'message_delta') {
      if (e.delta?.stop_reason) this.finish = finishReasonOf(e.delta.stop_reason);
      // Counts in message_delta are cumulative and win over message_start's.
      for (const [k, v] of Object.entries(e.usage ?? {})) if (v != null) this.usage[k] = v;
    } else if (type === 'message_stop') {
      this.stopped = true;
      this.out.push(f.chunk({}, this.finish), f.usage(usageOf(this.usage)));
    }
  }
}
