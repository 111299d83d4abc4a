// OpenAI and every OpenAI-compatible API (DeepSeek, Groq, Mistral, OpenRouter,
// vLLM, LM Studio, ...): base URL includes the version path, Bearer key.
import { endpointPath, joinUrl, type Provider } from '../types.js';

export const openaiProvider: Provider = {
  type: 'openai',
  label: 'OpenAI-compatible',
  defaultBaseUrl: 'https://api.openai.com/v1',
  keyRequired: true,
  streamUsageDefault: true,
  endpoints: ['chat', 'embeddings', 'rerank'],
  target(endpoint, _model, channel) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (channel.key) headers.authorization = `Bearer ${channel.key}`;
    return { url: joinUrl(channel.baseUrl, endpointPath[endpoint]), headers };
  },
};
