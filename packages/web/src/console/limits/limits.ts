// The gateway's rate limits and budgets as the console reads them: one list
// (GET /api/rate-limits) shared by every page that shows them, each row by
// its scope and subject (a token's or user's id, a group's or model's name).
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { RateLimit, RateLimitList, RateLimitScope } from '@kbchat/contracts';
import type { Translate } from '../../i18n';
import { formatUnits, gatewayApi } from '../gateway-api';

export type { RateLimit, RateLimitScope };

const KEY = ['rate-limits'];

/** The list (administrators only: the API refuses others, so the query waits for `enabled`). */
export function useRateLimits(enabled = true) {
  const client = useQueryClient();
  const query = useQuery({ queryKey: KEY, queryFn: ({ signal }) => gatewayApi<RateLimitList>('/api/rate-limits', { signal }), enabled });
  return { ...query, reload: () => void client.invalidateQueries({ queryKey: KEY }) };
}

export function limitsOf(list: RateLimitList | undefined, scope: RateLimitScope, subject: string | number): RateLimit | undefined {
  return list?.data.find((r) => r.scope === scope && r.subject === String(subject));
}

/** The API path of a subject's limits (a model's name may hold '/', '%' or spaces). */
export const limitsPath = (scope: RateLimitScope, subject: string | number): string => `/api/rate-limits/${scope}/${encodeURIComponent(String(subject))}`;

/** "30 RPM · 1,000 TPM · 5 per day", or undefined when the row sets nothing. */
export function limitsSummary(row: RateLimit | undefined, t: Translate): string | undefined {
  if (!row) return undefined;
  const parts: string[] = [];
  for (const kind of ['rpm', 'tpm', 'rpd'] as const) {
    const n = row[kind];
    if (n !== null) parts.push(t(`limits.short.${kind}`, { n: n.toLocaleString('en-US') }));
  }
  if (row.budget) parts.push(t('limits.short.budget', { amount: formatUnits(row.budget.amount), period: t(`limits.period.${row.budget.period}`) }));
  return parts.length ? parts.join(' · ') : undefined;
}
