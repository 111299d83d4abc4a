// Azure OpenAI: the deployment is in the path, the key in an `api-key` header,
// and the API version in the query. The mapped model name is the deployment.
import { endpointPath, joinUrl, type Provider } from '../types.js';

export const azureProvider: Provider = {
  type: 'azure',
  label: 'Azure OpenAI',
  keyRequired: true,
  streamUsageDefault: true,
  endpoints: ['chat', 'embeddings'],
  target(endpoint, model, channel) {
    const version = channel.options.apiVersion ?? '2024-10-21';
    const path = `/openai/deployments/${encodeURIComponent(model)}${endpointPath[endpoint]}?api-version=${encodeURIComponent(version)}`;
    return { url: joinUrl(channel.baseUrl, path), headers: { 'content-type': 'application/json', 'api-key': channel.key } };
  },
};
