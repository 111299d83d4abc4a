// POST /v1/messages: Anthropic's Messages API, for clients written for it (the
// Claude SDKs), over any channel. The body is translated to an OpenAI chat body
// up front and run through relayChat, so reservation, retries, billing, the
// request log and metrics are chat's own; a responder that shapes the way back
// turns the OpenAI answer or chunks into Anthropic's message or events
// (providers/anthropic/inbound.ts). Errors answered before a stream began get
// Anthropic's envelope in front-serve.ts (the route says which API it speaks).
import { countChatPromptTokens } from '@kbchat/shared';
import type { GatewayError } from '../errors.js';
import { AnthropicEventStream, anthropicErrorEvent, anthropicFromOpenAI, openAIFromAnthropic } from '../providers/anthropic/inbound.js';
import { relayChat } from './chat.js';
import type { StreamErrorResponder } from './chat-stream.js';
import type { RelayContext, RelayDeps, Responder } from './context.js';

/**
 * The client's responder, seen by the chat relay as an OpenAI one: a JSON
 * answer becomes an Anthropic message, the chunks of a stream its events, and
 * an error inside the stream an `error` event.
 */
class AnthropicResponder implements StreamErrorResponder {
  private events: AnthropicEventStream | undefined;

  constructor(
    private readonly client: Responder,
    private readonly model: string,
    private readonly promptTokens: () => number,
  ) {}

  get started(): boolean {
    return this.client.started;
  }

  setHeaders(pairs: readonly string[]): void {
    this.client.setHeaders?.(pairs);
  }

  json(status: number, text: string): void {
    this.client.json(status, JSON.stringify(anthropicFromOpenAI(JSON.parse(text), this.model)));
  }

  startStream(): void {
    // message_start carries the gateway's count of the prompt; message_delta the upstream's, when it reports one.
    this.events = new AnthropicEventStream(this.model, this.promptTokens());
    this.client.startStream();
  }

  write(text: string): Promise<void> | void {
    const events = this.events!.push(text);
    if (events) return this.client.write(events);
  }

  end(text?: string): void {
    const events = this.events!;
    this.client.end((text ? events.push(text) : '') + events.finish());
  }

  endWithError(error: GatewayError, requestId: string, before: string): void {
    this.client.end((before ? this.events!.push(before) : '') + anthropicErrorEvent(error, requestId));
  }
}

export async function relayMessages(deps: RelayDeps, ctx: RelayContext, rawBody: unknown, responder: Responder): Promise<void> {
  const body = openAIFromAnthropic(rawBody) as { model: string; messages: unknown; tools?: unknown };
  // The translated body is what goes up, and what a failed request's log row keeps for replay.
  ctx.rawBody = JSON.stringify(body);
  const shaped = new AnthropicResponder(responder, body.model, () => countChatPromptTokens(body.messages as any, body.tools as any));
  await relayChat(deps, ctx, body, shaped);
}
