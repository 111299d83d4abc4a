// The applications' queries that several pages share: ['apps', appId] is an
// application's detail; every list of them is under ['apps', {…}].
import { useQuery } from '@tanstack/react-query';
import { api, withQuery, type PublicApp, type PublicOutLink } from '../api';

export const appKey = (appId: string) => ['apps', appId] as const;
export const shareLinksKey = (appId: string) => ['apps', appId, 'share-links'] as const;
/** Every page of an application's annotations (the annotations page's, under a search and an offset). */
export const annotationsKey = (appId: string) => ['apps', appId, 'annotations'] as const;

export function useAppDetail(appId: string) {
  return useQuery({ queryKey: appKey(appId), queryFn: ({ signal }) => api<PublicApp>(withQuery('/api/core/app/detail', { appId }), { signal }) });
}

export function useShareLinks(appId: string) {
  return useQuery({
    queryKey: shareLinksKey(appId),
    queryFn: ({ signal }) => api<PublicOutLink[]>(withQuery('/api/support/outLink/list', { appId }), { signal }),
  });
}
