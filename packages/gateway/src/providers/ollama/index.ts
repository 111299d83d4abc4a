// Ollama through its OpenAI-compatible /v1 API; a key is optional.
import { endpointPath, joinUrl, type Provider } from '../types.js';

export const ollamaProvider: Provider = {
  type: 'ollama',
  label: 'Ollama',
  defaultBaseUrl: 'http://127.0.0.1:11434/v1',
  keyRequired: false,
  streamUsageDefault: true,
  endpoints: ['chat', 'embeddings'],
  target(endpoint, _model, channel) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (channel.key) headers.authorization = `Bearer ${channel.key}`;
    return { url: joinUrl(channel.baseUrl, endpointPath[endpoint]), headers };
  },
};
