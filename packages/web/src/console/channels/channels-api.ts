// The channels admin API as the page calls it; the answers' types are the gateway's own.
import { withQuery } from '../../api';
import { gatewayApi } from '../gateway-api';
import type {
  ChannelInput,
  ChannelModelBody,
  ChannelPage,
  ChannelProviders,
  ChannelTestAnswer,
  EnableKeyAnswer,
  EnableModelsAnswer,
  GatewayDeleted,
  PublicChannel,
  TestAllBody,
  TestAllResult,
} from '@kbchat/contracts';

export type {
  ChannelInput,
  ChannelPage,
  ChannelProviders,
  PublicChannel,
  PublicChannelKey,
  PublicDisabledModel,
  PublicModelTest,
  TestAllResult,
} from '@kbchat/contracts';

export type StatusFilter = '' | 'enabled' | 'disabled' | 'auto_disabled';

export interface ListQuery {
  q: string;
  status: StatusFilter;
  offset: number;
  limit: number;
}

const path = (id: number, rest = '') => `/api/channels/${encodeURIComponent(String(id))}${rest}`;

export const channelsApi = {
  list: (q: ListQuery, signal?: AbortSignal) =>
    gatewayApi<ChannelPage>(withQuery('/api/channels', { q: q.q || undefined, status: q.status || undefined, offset: q.offset, limit: q.limit }), { signal }),
  get: (id: number) => gatewayApi<PublicChannel>(path(id)),
  providers: (signal?: AbortSignal) => gatewayApi<ChannelProviders>('/api/channels/providers', { signal }),
  create: (input: ChannelInput) => gatewayApi<PublicChannel>('/api/channels', { json: input }),
  update: (id: number, input: ChannelInput) => gatewayApi<PublicChannel>(path(id), { method: 'PATCH', json: input }),
  remove: (id: number) => gatewayApi<GatewayDeleted>(path(id), { method: 'DELETE' }),
  test: (id: number, model?: string) =>
    gatewayApi<ChannelTestAnswer>(path(id, '/test'), { json: (model === undefined ? {} : { model }) satisfies ChannelModelBody }),
  testAll: () => gatewayApi<TestAllResult>('/api/channels/test-all', { json: {} satisfies TestAllBody }),
  enableModels: (id: number, model?: string) =>
    gatewayApi<EnableModelsAnswer>(path(id, '/enable-models'), { json: (model === undefined ? {} : { model }) satisfies ChannelModelBody }),
  /** A disabled key of a pool, by its index as the channel lists it. */
  enableKey: (id: number, index: number) => gatewayApi<EnableKeyAnswer>(path(id, `/keys/${index}/enable`), { method: 'POST' }),
};

/** Where the channel came from, when not made here: the variable that made it (or the built-in local models). */
export function envSource(c: PublicChannel): string | null {
  if (c.source !== 'env' || !c.env_provider) return null;
  return c.env_provider === 'LOCAL' ? 'LOCAL' : `${c.env_provider}_API_KEY`;
}
