// A list from the gateway that follows what is typed: users or tokens searched
// by name (?q=), sent after a pause in typing. The log filters' pickers and the
// tokens page's owner filter use it.
import { useEffect, useState } from 'react';
import { gatewayApi } from './gateway-api';

/** Typing pauses this long before a search is sent. */
export const SEARCH_DELAY_MS = 250;

/** The result of a list call that follows its inputs (searched after a pause in typing); [] until it answers. */
export function useSearched<T>(path: string | null, delay: number): { items: T[]; error?: Error } {
  const [state, setState] = useState<{ items: T[]; error?: Error }>({ items: [] });
  useEffect(() => {
    if (path === null) return;
    let current = true;
    const timer = setTimeout(() => {
      gatewayApi<{ data: T[] }>(path).then(
        (r) => current && setState({ items: r.data }),
        (error: Error) => current && setState((s) => ({ ...s, error })),
      );
    }, delay);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [path, delay]);
  return state;
}
