// A relayed request's rate limits: every limit that applies to it (its
// token's, its user's, its group's and its model's, each RPM, TPM and RPD)
// counts it before the upstream is called; the first one over refuses it
// with a 429 that names the limit, and gives back what the others counted.
// TPM counts the tokens reserved for the request (input estimated, output at
// most) and is settled to the tokens used when the answer ends.
//
// Windows are fixed, starting at their first request (rate-limiter-flexible's
// way): 30 RPM lets 30 requests through in any minute-long window that begins
// with one, and a burst of 60 gets exactly 30. Budgets (budgets.ts) are
// counted the same way, in micro-units, in windows that are their periods.
import { callerGroup, type Caller } from '../accounts/auth.js';
import { GatewayError } from '../errors.js';
import type { LimitKind, LimitsBook } from './book.js';
import { budgetChecks } from './budgets.js';
import type { Check, Counters, WindowCount } from './counters.js';
import type { LimitScope, RateLimitsStore } from './store.js';

const KIND: Record<LimitKind, { windowMs: number; label: string; unit: 'requests' | 'tokens' }> = {
  rpm: { windowMs: 60_000, label: 'requests per min (RPM)', unit: 'requests' },
  tpm: { windowMs: 60_000, label: 'tokens per min (TPM)', unit: 'tokens' },
  rpd: { windowMs: 86_400_000, label: 'requests per day (RPD)', unit: 'requests' },
};

export class RateLimiter {
  constructor(
    readonly book: LimitsBook,
    readonly counters: Counters,
    private readonly store: RateLimitsStore,
    private readonly onError: (err: Error) => void = () => {},
  ) {}

  /**
   * Counts the request against every limit and budget that applies; throws a
   * 429 when one is over. Undefined when none applies (no store or Redis call).
   */
  async admit(caller: Caller, model: string, reservedTokens: number, reservedMicros: number): Promise<Admission | undefined> {
    if (this.book.empty) return undefined;
    const now = Date.now();
    const checks = [...this.rateChecks(caller, model, reservedTokens), ...budgetChecks(this.book, this.store, caller, reservedMicros, now)];
    if (checks.length === 0) return undefined;
    const counts = await Promise.all(checks.map((c) => this.counters.add(c.key, c.points, c.windowMs)));
    try {
      for (let i = 0; i < checks.length; i++) {
        const c = checks[i]!;
        // This request began the window: where the window is newer than what it counts (a budget's period), catch up.
        if (c.seed && counts[i]!.points === c.points) {
          const before = await c.seed().catch((err: unknown) => {
            this.onError(new Error(`a budget's spend so far could not be read, counted from 0: ${(err as Error).message}`));
            return 0;
          });
          if (before > 0) counts[i] = await this.counters.add(c.key, before, c.windowMs);
        }
      }
    } catch (err) {
      giveBack(this.counters, checks, counts, now);
      throw err;
    }
    const over = checks.findIndex((c, i) => counts[i]!.points > c.limit);
    if (over < 0) return new Admission(this.counters, checks, counts, now);
    // Refused: nothing of it counts, in any window.
    await giveBack(this.counters, checks, counts, now);
    throw checks[over]!.refuse(counts[over]!);
  }

  private rateChecks(caller: Caller, model: string, tokens: number): Check[] {
    const group = callerGroup(caller);
    const subjects: [LimitScope, string, string][] = [
      ['token', String(caller.token.id), `token "${caller.token.name}"`],
      ['user', String(caller.user.id), `user "${caller.user.username}"`],
      ['group', group, `group "${group}"`],
      ['model', model, `model "${model}"`],
    ];
    const checks: Check[] = [];
    for (const [scope, subject, name] of subjects) {
      const row = this.book.of(scope, subject);
      if (!row) continue;
      for (const kind of ['rpm', 'tpm', 'rpd'] as const) {
        const limit = row[kind];
        if (limit === null) continue;
        const points = kind === 'tpm' ? Math.max(1, tokens) : 1;
        const { windowMs, unit } = KIND[kind];
        checks.push({
          key: `${kind}:${scope}:${subject}`,
          points,
          limit,
          windowMs,
          unit,
          settles: kind === 'tpm' ? 'tokens' : undefined,
          refuse: (count) => rateLimited(kind, name, limit, points, count),
        });
      }
    }
    return checks;
  }
}

/** OpenAI's 429 for a rate limit: its type is the unit, its message names the limit, and Retry-After says when. */
function rateLimited(kind: LimitKind, name: string, limit: number, points: number, count: WindowCount): GatewayError {
  const seconds = Math.max(1, Math.ceil(count.msLeft / 1000));
  const used = Math.max(0, count.points - points);
  const e = new GatewayError(
    429,
    `Rate limit reached for ${name} on ${KIND[kind].label}: Limit ${limit}, Used ${used}, Requested ${points}. Please try again in ${seconds}s.`,
    KIND[kind].unit,
    'rate_limit_exceeded',
  );
  e.retryAfter = String(seconds);
  return e;
}

/** A request that was let through: the headers that tell the caller where it stands, and the TPM to settle. */
export class Admission {
  private settled = false;

  constructor(
    private readonly counters: Counters,
    private readonly checks: Check[],
    private readonly counts: WindowCount[],
    private readonly at: number,
  ) {}

  /**
   * OpenAI's x-ratelimit-* headers, as flat name/value pairs: for requests
   * and for tokens, the limit with the least left.
   */
  headers(): string[] {
    const out: string[] = [];
    for (const unit of ['requests', 'tokens'] as const) {
      let best = -1;
      for (let i = 0; i < this.checks.length; i++) {
        const c = this.checks[i]!;
        if (c.unit !== unit) continue;
        if (best < 0 || this.left(i) < this.left(best)) best = i;
      }
      if (best < 0) continue;
      const c = this.checks[best]!;
      out.push(`x-ratelimit-limit-${unit}`, String(c.limit), `x-ratelimit-remaining-${unit}`, String(this.left(best)));
      out.push(`x-ratelimit-reset-${unit}`, `${Math.max(0, Math.ceil(this.counts[best]!.msLeft / 1000))}s`);
    }
    return out;
  }

  private left(i: number): number {
    return Math.max(0, this.checks[i]!.limit - this.counts[i]!.points);
  }

  /** Turns what was reserved into what was used (tokens, money), in windows that have not started again since. */
  settle(usedTokens: number, cost: number): void {
    if (this.settled) return;
    this.settled = true;
    const elapsed = Date.now() - this.at;
    for (let i = 0; i < this.checks.length; i++) {
      const c = this.checks[i]!;
      if (!c.settles) continue;
      const diff = (c.settles === 'tokens' ? usedTokens : cost) - c.points;
      if (diff === 0 || elapsed >= this.counts[i]!.msLeft) continue;
      this.counters.add(c.key, diff, c.windowMs).catch(() => undefined);
    }
  }

  /** The request never ran (its money reservation was refused): nothing of it counts. */
  release(): void {
    if (this.settled) return;
    this.settled = true;
    void giveBack(this.counters, this.checks, this.counts, this.at);
  }
}

/** Takes a request's points back out of the windows it counted in, where they have not ended since (`at`: when it counted). */
async function giveBack(counters: Counters, checks: Check[], counts: WindowCount[], at: number): Promise<void> {
  const elapsed = Date.now() - at;
  await Promise.all(checks.map((c, i) => (elapsed < counts[i]!.msLeft ? counters.add(c.key, -c.points, c.windowMs).catch(() => undefined) : undefined)));
}
