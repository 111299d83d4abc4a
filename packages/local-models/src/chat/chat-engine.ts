// What the chat route needs from a local chat model: text pieces, in order.
import type { ChatRequest } from '@kbchat/shared';

export interface ChatGeneration {
  pieces: AsyncIterable<string>;
  /** Read after the pieces are consumed. */
  finishReason(): 'stop' | 'length';
}

export interface PlainMessage {
  role: string;
  text: string;
}

export interface ChatEngine {
  readonly model: string;
  /** Errors thrown here (before any piece) become HTTP errors; later ones end the stream. */
  generate(request: ChatRequest, messages: PlainMessage[], signal: AbortSignal): Promise<ChatGeneration>;
}

/** Message content as text (string, or the text parts of an array). */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
    .filter(Boolean)
    .join('\n');
}
