// Reads the platform's chat event stream (SSE with FastGPT's named events)
// from a fetch Response. Bytes may be split anywhere, inside a line or a
// multi-byte character; lines end in LF, CRLF or CR; comments (":") and
// unknown fields are skipped; several data lines join with "\n".

export interface SseMessage {
  /** The `event:` name, "message" when there was none. */
  event: string;
  data: string;
}

/** Splits a stream of text into SSE messages; feed it text, then end(). */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  /** A CR ended the last chunk: an LF opening the next one belongs to it. */
  private pendingCr = false;

  constructor(private readonly emit: (m: SseMessage) => void) {}

  feed(text: string): void {
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(this.buffer.slice(start, i));
      if (c === '\r') {
        if (i + 1 === this.buffer.length) this.pendingCr = true;
        else if (this.buffer[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
  }

  /** The stream ended: a message without its blank line is still dispatched. */
  end(): void {
    if (this.buffer) this.line(this.buffer);
    this.buffer = '';
    this.line('');
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length) this.emit({ event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}

/** An error the platform answered with: its message, status and request id. */
export class ChatStreamError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

export type ChatEvent =
  | { type: 'answer'; text: string }
  | { type: 'status'; name: string }
  | { type: 'variables'; values: Record<string, unknown> }
  | { type: 'responseData'; records: unknown[] }
  | { type: 'done' };

function errorMessage(body: string, fallback: string): string {
  try {
    const json = JSON.parse(body);
    return json?.message || json?.error?.message || fallback;
  } catch {
    return body.trim() || fallback;
  }
}

/** The status an error event's body names (the platform's envelope `code`), else 500. */
function errorStatus(body: string): number {
  try {
    const code = JSON.parse(body)?.code;
    return typeof code === 'number' && code >= 400 ? code : 500;
  } catch {
    return 500;
  }
}

/** Turns one SSE message into what the chat shows (null: nothing to show). */
export function chatEventOf(m: SseMessage, requestId: string | null): ChatEvent | null {
  if (m.data === '[DONE]') return { type: 'done' };
  if (m.event === 'error') throw new ChatStreamError(errorMessage(m.data, 'The chat failed'), errorStatus(m.data), requestId);
  let json: any;
  try {
    json = JSON.parse(m.data);
  } catch {
    return null;
  }
  switch (m.event) {
    case 'answer':
    case 'fastAnswer':
    case 'message': {
      const text = json?.choices?.[0]?.delta?.content;
      return typeof text === 'string' && text ? { type: 'answer', text } : null;
    }
    case 'flowNodeStatus':
      return { type: 'status', name: String(json?.name ?? '') };
    case 'updateVariables':
      return { type: 'variables', values: json ?? {} };
    case 'flowResponses':
      return { type: 'responseData', records: Array.isArray(json) ? json : [] };
    default:
      return null;
  }
}

/**
 * Reads a chat response to its end, calling onEvent for each event in order.
 * A non-2xx answer or an `error` event throws ChatStreamError with the
 * platform's message; an abort (Stop) rejects with the AbortError.
 */
export async function readChatStream(res: Response, onEvent: (e: ChatEvent) => void): Promise<void> {
  const requestId = res.headers.get('x-request-id');
  if (!res.ok) throw new ChatStreamError(errorMessage(await res.text(), `${res.status} ${res.statusText}`), res.status, requestId);
  if (!res.body) throw new ChatStreamError('The platform sent no answer', res.status, requestId);
  const decoder = new TextDecoder();
  let failure: unknown;
  const parser = new SseParser((m) => {
    if (failure) return;
    try {
      const e = chatEventOf(m, requestId);
      if (e) onEvent(e);
    } catch (err) {
      failure = err;
    }
  });
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
    if (failure) {
      await reader.cancel().catch(() => {});
      throw failure;
    }
  }
  parser.feed(decoder.decode());
  parser.end();
  if (failure) throw failure;
}
