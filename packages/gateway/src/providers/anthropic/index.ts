// Anthropic's Messages API (ANTHROPIC_API_KEY). The base URL is Anthropic's
// own (https://api.anthropic.com, without /v1, as its SDKs take it); the key
// goes in x-api-key. The translators are pure (request.ts, response.ts,
// stream.ts, errors.ts); inbound.ts is the other direction, for clients that
// speak Anthropic's format to the gateway.
import type { Provider, UpstreamTarget } from '../types.js';
import { providerUrl, type ChannelAccess, type WireAdapter } from '../wire.js';
import { anthropicFailure } from './errors.js';
import { anthropicRequest } from './request.js';
import { anthropicResponse } from './response.js';
import { AnthropicStream } from './stream.js';

/** The API version sent when the channel's options name none (`apiVersion`). */
export const ANTHROPIC_VERSION = '2023-06-01';

function messagesTarget(channel: ChannelAccess): UpstreamTarget {
  return {
    url: providerUrl(channel.baseUrl, 'v1', '/messages'),
    headers: { 'content-type': 'application/json', 'x-api-key': channel.key, 'anthropic-version': channel.options.apiVersion ?? ANTHROPIC_VERSION },
  };
}

export const anthropicWire: WireAdapter = {
  chatTarget: (_model, _stream, channel) => messagesTarget(channel),
  chatRequest: anthropicRequest,
  chatResponse: anthropicResponse,
  chatStream: (ctx) => new AnthropicStream(ctx),
  error: (status, body, headers) => anthropicFailure(status, body, headers),
};

export const anthropicProvider: Provider = {
  type: 'anthropic',
  label: 'Anthropic (Messages API)',
  defaultBaseUrl: 'https://api.anthropic.com',
  keyRequired: true,
  // Anthropic streams report usage by themselves; there is no option to ask for it.
  streamUsageDefault: false,
  endpoints: ['chat'],
  target: (_endpoint, _model, channel) => messagesTarget(channel),
  wire: anthropicWire,
};
