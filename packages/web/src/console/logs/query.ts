// The log list's filters as the page's query string: what a shared link
// carries and a reload keeps. Ids go in the URL (names change, ids do not);
// times as UTC ISO 8601, which the API reads and a person can read too.

export const STATUSES = ['ok', 'error', '2xx', '4xx', '5xx'] as const;
export type StatusFilter = (typeof STATUSES)[number];

export interface LogFilters {
  from?: string;
  to?: string;
  user_id?: string;
  token_id?: string;
  channel_id?: string;
  model?: string;
  status?: StatusFilter;
}

const KEYS = ['from', 'to', 'user_id', 'token_id', 'channel_id', 'model', 'status'] as const;
const isId = (v: string) => /^[1-9]\d{0,9}$/.test(v);
const isTime = (v: string) => !Number.isNaN(Date.parse(v));

/**
 * The filters a query string holds. A value that is not what its field takes
 * (a hand-edited link) is dropped rather than sent: the page then shows what
 * it did filter by.
 */
export function filtersOf(search: string): LogFilters {
  const q = new URLSearchParams(search);
  const out: LogFilters = {};
  for (const key of KEYS) {
    const v = q.get(key)?.trim();
    if (!v) continue;
    if (key === 'status') {
      if ((STATUSES as readonly string[]).includes(v)) out.status = v as StatusFilter;
    } else if (key === 'from' || key === 'to') {
      if (isTime(v)) out[key] = v;
    } else if (key === 'model') out.model = v;
    else if (isId(v)) out[key] = v;
  }
  return out;
}

/** The query string of filters and a page cursor, keys in a fixed order (a shared link reads the same). */
export function queryOf(filters: LogFilters, cursor?: string): string {
  const q = new URLSearchParams();
  for (const key of KEYS) {
    const v = filters[key];
    if (v) q.set(key, v);
  }
  if (cursor) q.set('cursor', cursor);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const cursorOf = (search: string): string | undefined => new URLSearchParams(search).get('cursor') || undefined;

export const isFiltered = (f: LogFilters): boolean => KEYS.some((k) => Boolean(f[k]));

/** A datetime-local input's value (the reader's local time) for an ISO time, and back. */
export function localInputOf(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function isoOfLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/**
 * The cursors of the pages seen for one filter, in order, up to the current
 * page ('' is the newest page): Previous goes one back. Kept beside the page,
 * not in it, so that opening a request's detail and coming back keeps the way
 * back. A shared link with a cursor starts a trail of its own: no Previous,
 * and no page number (only Newest).
 */
let trail: { key: string; cursors: string[] } = { key: '', cursors: [''] };

export function trailOf(filterKey: string, cursor: string): string[] {
  if (trail.key !== filterKey || !trail.cursors.includes(cursor)) trail = { key: filterKey, cursors: [cursor] };
  return trail.cursors.slice(0, trail.cursors.indexOf(cursor) + 1);
}

export function rememberNext(filterKey: string, cursor: string, next: string): void {
  trail = { key: filterKey, cursors: [...trailOf(filterKey, cursor), next] };
}

/** The list's query as last shown, so that a detail's way back returns to the same view. */
let lastList = '';
export const rememberListQuery = (search: string): void => void (lastList = search);
export const lastListQuery = (): string => lastList;
