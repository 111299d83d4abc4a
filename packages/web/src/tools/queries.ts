// The tool sources' queries that the Tools pages and an application's settings
// share: ['tools'] is the team's list, ['tools', id] one source with its tools,
// so that a change to a source invalidates both at once.
import { useQuery, type QueryClient } from '@tanstack/react-query';
import { api, withQuery, type PublicToolSource, type ToolSourceDetail } from '../api';

export const TOOLS = ['tools'] as const;
export const toolSourceKey = (id: string) => ['tools', id] as const;

export const listToolSources = (signal?: AbortSignal) => api<PublicToolSource[]>('/api/core/tool/source/list', { signal });
export const loadToolSource = (id: string, signal?: AbortSignal) => api<ToolSourceDetail>(withQuery('/api/core/tool/source/detail', { id }), { signal });

export function useToolSources() {
  return useQuery({ queryKey: TOOLS, queryFn: ({ signal }) => listToolSources(signal) });
}

export function useToolSource(id: string) {
  return useQuery({ queryKey: toolSourceKey(id), queryFn: ({ signal }) => loadToolSource(id, signal) });
}

/** Lists the source's tools again; the answer is the source as it is now, put where both queries read it. */
export async function refreshToolSource(client: QueryClient, id: string): Promise<ToolSourceDetail> {
  const fresh = await api<ToolSourceDetail>('/api/core/tool/source/refresh', { json: { id } });
  client.setQueryData(toolSourceKey(id), fresh);
  await client.invalidateQueries({ queryKey: TOOLS, exact: true });
  return fresh;
}

export async function deleteToolSource(client: QueryClient, id: string): Promise<void> {
  await api(withQuery('/api/core/tool/source/delete', { id }), { method: 'DELETE' });
  client.removeQueries({ queryKey: toolSourceKey(id) });
  await client.invalidateQueries({ queryKey: TOOLS, exact: true });
}
