// Google's Gemini API (GEMINI_API_KEY). The base URL is Google's own
// (https://generativelanguage.googleapis.com, the API version added here);
// the key goes in the x-goog-api-key header, never in the URL, so that it
// cannot reach a log line. Translators: request.ts, response.ts, stream.ts,
// errors.ts, embeddings.ts (batchEmbedContents).
import type { Provider, UpstreamTarget } from '../types.js';
import { providerUrl, type ChannelAccess, type WireAdapter } from '../wire.js';
import { geminiEmbeddingRequests, geminiEmbeddingResponse } from './embeddings.js';
import { geminiFailure } from './errors.js';
import { geminiRequest } from './request.js';
import { geminiResponse } from './response.js';
import { GeminiStream } from './stream.js';

function modelTarget(channel: ChannelAccess, model: string, method: string): UpstreamTarget {
  return {
    url: providerUrl(channel.baseUrl, 'v1beta', `/models/${encodeURIComponent(model)}:${method}`),
    headers: { 'content-type': 'application/json', 'x-goog-api-key': channel.key },
  };
}

export const geminiWire: WireAdapter = {
  chatTarget: (model, stream, channel) => modelTarget(channel, model, stream ? 'streamGenerateContent?alt=sse' : 'generateContent'),
  chatRequest: (body) => geminiRequest(body),
  chatResponse: geminiResponse,
  chatStream: (ctx) => new GeminiStream(ctx),
  error: (status, body) => geminiFailure(status, body),
  embeddings: {
    target: (model, channel) => modelTarget(channel, model, 'batchEmbedContents'),
    requests: geminiEmbeddingRequests,
    response: geminiEmbeddingResponse,
  },
};

export const geminiProvider: Provider = {
  type: 'gemini',
  label: 'Google Gemini',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  keyRequired: true,
  // Gemini streams carry usageMetadata by themselves.
  streamUsageDefault: false,
  endpoints: ['chat', 'embeddings'],
  target: (endpoint, model, channel) => modelTarget(channel, model, endpoint === 'embeddings' ? 'batchEmbedContents' : 'generateContent'),
  wire: geminiWire,
};
