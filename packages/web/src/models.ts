// The configured models and whether the gateway serves each: one query that
// the datasets, apps and settings pages share.
import { useQuery } from '@tanstack/react-query';
import { api, type ModelList } from './api';

export const modelsKey = ['models'] as const;

export function useModelList() {
  return useQuery({ queryKey: modelsKey, queryFn: ({ signal }) => api<ModelList>('/api/core/ai/model/list', { signal }) });
}
