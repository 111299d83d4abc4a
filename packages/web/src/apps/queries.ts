// The applications' queries that several pages share: ['apps', appId] is an
// application's detail; every list of them is under ['apps', {…}].
import { useQuery } from '@tanstack/react-query';
import { api, withQuery, type PublicApp } from '../api';

export const appKey = (appId: string) => ['apps', appId] as const;

export function useAppDetail(appId: string) {
  return useQuery({ queryKey: appKey(appId), queryFn: ({ signal }) => api<PublicApp>(withQuery('/api/core/app/detail', { appId }), { signal }) });
}
