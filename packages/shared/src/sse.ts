// Server-sent events for OpenAI-style streams. The upstream side uses
// eventsource-parser, which has no line-length limit (gateways that split on a
// fixed 64 KB buffer break on long lines, a known complaint).
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export const SSE_DONE = 'data: [DONE]\n\n';

export function sseData(payload: string | object): string {
  return `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
}

export function sseEvent(event: string, payload: string | object): string {
  return `event: ${event}\n${sseData(payload)}`;
}

/** Feeds decoded text chunks and calls onData with each event's data field. */
export function createSseReader(onData: (data: string, event?: string) => void): { feed(text: string): void } {
  const parser = createParser({
    onEvent(msg: EventSourceMessage) {
      onData(msg.data, msg.event);
    },
  });
  return { feed: (text: string) => parser.feed(text) };
}
