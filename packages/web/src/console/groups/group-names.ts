// The groups a form offers (a user's, a token's, a channel's): one query that
// the Groups page shares, so that a group added there is offered here at once.
import type { GroupsAnswer } from '@kbchat/contracts';
import { useQuery } from '@tanstack/react-query';
import { gatewayApi } from '../gateway-api';

export const groupsQuery = {
  queryKey: ['groups'],
  queryFn: ({ signal }: { signal: AbortSignal }) => gatewayApi<GroupsAnswer>('/api/groups', { signal }),
};

/** Every group's name, `default` first; undefined while loading (or when `enabled` is false: only administrators may read them). */
export function useGroupNames(enabled = true): string[] | undefined {
  const { data } = useQuery({ ...groupsQuery, enabled });
  return data?.data.map((g) => g.name);
}
