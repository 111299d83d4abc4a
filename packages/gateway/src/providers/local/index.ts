// Models served in-process by @kbchat/local-models. Each gateway process runs
// its own local model server on a loopback port that changes at every start,
// so the channel row stores no address: this provider is created per process
// with the address of that process's server. A process started with
// LOCAL_MODELS=off has no local provider and does not serve the channel.
import { endpointPath, joinUrl, type Provider } from '../types.js';

export const LOCAL_PROVIDER_TYPE = 'local';
/** What the channel row stores instead of an address. */
export const LOCAL_BASE_URL = 'in-process://local-models';

/** `baseUrl`: the local server's OpenAI base URL (http://127.0.0.1:<port>/v1). */
export function localProvider(baseUrl: string): Provider {
  return {
    type: LOCAL_PROVIDER_TYPE,
    label: 'Local models (in-process)',
    keyRequired: false,
    streamUsageDefault: true,
    endpoints: ['chat', 'embeddings'],
    requestErrorsAreCallers: true,
    relaysPriority: true,
    target(endpoint) {
      return { url: joinUrl(baseUrl, endpointPath[endpoint]), headers: { 'content-type': 'application/json' } };
    },
  };
}

export interface LocalModelsHandle {
  provider: Provider;
  models: { id: string; kind: 'chat' | 'embeddings'; [info: string]: unknown }[];
  close(): Promise<void>;
}

/**
 * Starts this process's local model server. The package is imported only
 * here, so that a gateway with LOCAL_MODELS=off never loads the model runtime.
 */
export async function startLocalModels(options: {
  ggufPath?: string;
  embedWorkers?: number;
  embedPriority?: boolean;
  warmup: boolean;
}): Promise<LocalModelsHandle> {
  const local = await import('@kbchat/local-models');
  const server = await local.startLocalModels({ ggufPath: options.ggufPath, embedWorkers: options.embedWorkers, embedPriority: options.embedPriority });
  if (options.warmup) await server.warmup();
  return { provider: localProvider(server.baseUrl), models: server.models.map((m) => ({ ...m })), close: () => server.close() };
}
