// Budgets that reset: a token or a user may spend so many units per UTC day,
// week (from Monday) or month, besides its lifetime quota. A period's spend
// is a counter window (counters.ts) that starts with the period and ends
// with it, so the next period starts clean; a window that is new where the
// period is not (a restart, Redis emptied) starts from what the ledger's rows
// say was spent since the period began.
import type { Caller } from '../accounts/auth.js';
import { MICROS } from '../accounts/pricing.js';
import { GatewayError } from '../errors.js';
import type { LimitsBook } from './book.js';
import type { Check } from './counters.js';
import type { BudgetPeriod, RateLimitsStore } from './store.js';

/** Where the period holding `now` starts and ends (epoch ms, UTC). */
export function periodBounds(period: BudgetPeriod, now: number): { start: number; end: number } {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = Date.UTC(y, m, d.getUTCDate());
  if (period === 'day') return { start: day, end: day + 86_400_000 };
  if (period === 'week') {
    const start = day - ((d.getUTCDay() + 6) % 7) * 86_400_000;
    return { start, end: start + 7 * 86_400_000 };
  }
  return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
}

/** The budgets a request of `amount` micro-units counts against: its token's and its user's. */
export function budgetChecks(book: LimitsBook, store: RateLimitsStore, caller: Caller, amount: number, now: number): Check[] {
  const checks: Check[] = [];
  const subjects = [
    ['token', caller.token.id, `token "${caller.token.name}"`],
    ['user', caller.user.id, `user "${caller.user.username}"`],
  ] as const;
  for (const [scope, id, name] of subjects) {
    const row = book.of(scope, String(id));
    if (!row || row.budget === null || row.budget_period === null) continue;
    const { budget, budget_period: period } = row;
    const { start, end } = periodBounds(period, now);
    checks.push({
      key: `budget:${scope}:${id}:${period}:${start}`,
      points: amount,
      limit: budget,
      windowMs: end - now,
      settles: 'cost',
      // A new window where the period is not (a restart, Redis emptied) starts from the ledger's rows.
      seed: () => store.spentSince(scope, id, start),
      refuse: (count) => budgetReached(name, period, budget, count.points - amount, end, now),
    });
  }
  return checks;
}

/** OpenAI's quota 429, saying which budget and when it resets. */
function budgetReached(name: string, period: BudgetPeriod, budget: number, spent: number, end: number, now: number): GatewayError {
  const seconds = Math.max(1, Math.ceil((end - now) / 1000));
  const e = new GatewayError(
    429,
    `Budget reached for ${name}: ${budget / MICROS} per ${period}, ${(Math.max(0, spent) / MICROS).toFixed(6).replace(/\.?0+$/, '')} spent; it resets at ${new Date(end).toISOString()}.`,
    'insufficient_quota',
    'budget_exceeded',
  );
  e.retryAfter = String(seconds);
  return e;
}
