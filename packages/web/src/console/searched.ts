// A list from the gateway that follows what is typed: users or tokens searched
// by name (?q=), sent after a pause in typing. The log filters' pickers and the
// tokens page's owner filter use it.
import { useQuery } from '@tanstack/react-query';
import { keepPreviousData, useDebounced } from '../query';
import { gatewayApi } from './gateway-api';

/** Typing pauses this long before a search is sent. */
export const SEARCH_DELAY_MS = 250;

/**
 * The result of a list call that follows its inputs (searched after a pause in typing); [] until it answers.
 * Each path is its own query: a slow answer to an earlier search is cancelled, never shown for a later one.
 * A failure is returned (the pickers show it beside the filters), not thrown.
 */
export function useSearched<T>(path: string | null, delay: number): { items: T[]; error?: Error } {
  const settled = useDebounced(path, delay);
  const { data, error } = useQuery({
    queryKey: ['searched', settled],
    queryFn: ({ signal }) => gatewayApi<{ data: T[] }>(settled!, { signal }),
    enabled: settled !== null,
    throwOnError: false,
    placeholderData: keepPreviousData,
  });
  return { items: data?.data ?? [], error: error ?? undefined };
}
