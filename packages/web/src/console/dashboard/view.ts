// What the dashboard shows, as it is kept in the address (so that a view can
// be shared and survives a reload): ?range=hour|day|week, or
// ?range=custom&from=<ISO>&to=<ISO>; &group_by=model|channel|token|user.
// And how its numbers read.
import type { DashboardDimension } from '@kbchat/contracts';

export type RangeName = 'hour' | 'day' | 'week' | 'custom';
export const RANGE_MS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const;
export const RANGES: RangeName[] = ['hour', 'day', 'week', 'custom'];
export const GROUPS: DashboardDimension[] = ['model', 'channel', 'token', 'user'];

export interface View {
  range: RangeName;
  /** Only for 'custom': as given in the address (the gateway checks them and names a bad one). */
  from?: string;
  to?: string;
  group: DashboardDimension;
}

export function viewOf(search: string): View {
  const q = new URLSearchParams(search);
  const range = RANGES.includes(q.get('range') as RangeName) ? (q.get('range') as RangeName) : 'day';
  const group = GROUPS.includes(q.get('group_by') as DashboardDimension) ? (q.get('group_by') as DashboardDimension) : 'model';
  if (range !== 'custom') return { range, group };
  return { range, from: q.get('from') ?? undefined, to: q.get('to') ?? undefined, group };
}

export function searchOf(view: View): string {
  const q = new URLSearchParams({ range: view.range });
  if (view.range === 'custom') {
    if (view.from) q.set('from', view.from);
    if (view.to) q.set('to', view.to);
  }
  q.set('group_by', view.group);
  return `?${q.toString()}`;
}

/** The range to ask for now: a relative one ends at this moment. */
export function windowOf(view: View, now = Date.now()): { from?: string | number; to?: string | number } {
  if (view.range === 'custom') return { from: view.from, to: view.to };
  return { from: now - RANGE_MS[view.range], to: now };
}

/** A time as a datetime-local input holds it (local time, to the minute); '' for no time (a hand-edited link's `from=x`). */
export function toLocalInput(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  const d = new Date(ms);
  return new Date(ms - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A datetime-local input's value (local time) as ISO 8601, or '' when empty or not a time. */
export function fromLocalInput(value: string): string {
  const ms = new Date(value).getTime();
  return value && Number.isFinite(ms) ? new Date(ms).toISOString() : '';
}

const countFormat = new Intl.NumberFormat('en-US');
const compactFormat = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** A whole count in full (1,234): the numbers a reader checks. */
export const formatCount = (n: number): string => countFormat.format(n);
/** An axis label: 1.2K, 3M. */
export const formatCompact = (n: number): string => compactFormat.format(n);
export const formatMs = (n: number): string => `${Number(n.toFixed(1)).toLocaleString('en-US')} ms`;
