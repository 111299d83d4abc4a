// The data layer every entry shares: one TanStack Query cache per page load.
// Queries are keyed by what they hold (['datasets', id, 'collections', {…}]),
// so that an answer lands only under its own key (an older page's answer can
// never stand for a newer one) and a change invalidates exactly its keys.
import { keepPreviousData, QueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

export { keepPreviousData };

/**
 * The app's defaults, as the pages behaved before the cache:
 * - no automatic retry (`retry: false`): a failure shows at once, in place,
 *   with its Retry button where trying again can help;
 * - no refetch on window focus or reconnect: pages read again on a change,
 *   on their poll, or on Retry, never because the tab was focused;
 * - a failure is thrown to the nearest error boundary (`throwOnError`), as
 *   useLoad did; a query that shows its failure itself turns this off.
 * Polls (`refetchInterval`) pause while the tab is hidden (TanStack's default).
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchOnWindowFocus: false, refetchOnReconnect: false, throwOnError: true },
      mutations: { retry: false },
    },
  });
}

/** `value`, once it has stopped changing for `ms` (typing in a search box): the key of a search settles before it is sent. */
export function useDebounced<T>(value: T, ms = 250): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
