// Where rate-limit windows are counted: on Redis (REDIS_URL), exact across
// every gateway process that shares it; else on the shared database, exact
// too; else (the embedded store, one process) in this process's memory.
// rate-limiter-flexible counts on Redis (its atomic script); the database's
// counting is ours (store.ts), as the library's SQL limiters want their own
// driver pools; so is the memory's (MemoryCounters), since the library's
// ends each window with a timer, and Node fires a timer of more than 24.8
// days at once: a monthly budget's window would be gone in a millisecond.
//
// Redis or the database failing never refuses everyone: a window is then
// counted in this process's memory, /readyz says so (without failing), and
// the log says so once per outage. A Redis that times out is left alone for
// a few seconds, so that requests do not each wait for it.
import { Redis } from 'ioredis';
import flexible from 'rate-limiter-flexible';
import type { GatewayError } from '../errors.js';
import type { RateLimitsStore } from './store.js';

const { RateLimiterRedis } = flexible;

/** A window's count after an addition, and the milliseconds until it starts again. */
export interface WindowCount {
  points: number;
  msLeft: number;
}

/** One window a request counts in: a rate limit's, or a budget's period. */
export interface Check {
  key: string;
  points: number;
  limit: number;
  windowMs: number;
  /** Rate limits: what x-ratelimit-* report it as. Budgets report nothing. */
  unit?: 'requests' | 'tokens';
  /** Tokens (TPM) or money (budgets) are settled to what was used; requests are not. */
  settles?: 'tokens' | 'cost';
  /** What a new window starts from (a budget's spend so far in its period). */
  seed?: () => Promise<number>;
  refuse(count: WindowCount): GatewayError;
}

export interface Counters {
  /** Where windows are counted when all is well. */
  readonly where: 'redis' | 'store' | 'process';
  /** Adds `points` (negative to give back) to the window `key` of `windowMs`, starting it where it has ended. */
  add(key: string, points: number, windowMs: number): Promise<WindowCount>;
  /** Why windows are counted per process just now, if they are (for /readyz). */
  problem(): string | undefined;
  close(): Promise<void>;
}

/**
 * Windows in this process's memory, each ending at its own time, checked
 * when it is next counted (no timers); ended ones are swept now and then.
 */
export class MemoryCounters implements Counters {
  readonly where = 'process';
  private readonly windows = new Map<string, { points: number; endsAt: number }>();
  private sweptAt = 0;

  async add(key: string, points: number, windowMs: number, now = Date.now()): Promise<WindowCount> {
    let w = this.windows.get(key);
    if (!w || w.endsAt <= now) {
      // Giving back to a window that has ended gives nothing: the next one starts clean.
      if (points <= 0) return { points: 0, msLeft: windowMs };
      w = { points: 0, endsAt: now + windowMs };
      this.windows.set(key, w);
    }
    w.points += points;
    if (now - this.sweptAt > 60_000) this.sweep(now);
    return { points: w.points, msLeft: w.endsAt - now };
  }

  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [key, w] of this.windows) if (w.endsAt <= now) this.windows.delete(key);
  }

  problem(): undefined {
    return undefined;
  }

  async close(): Promise<void> {}
}

/** How long a Redis that failed or timed out is left alone before it is tried again. */
const REDIS_RETRY_MS = 5_000;

class RedisCounters implements Counters {
  readonly where = 'redis';
  private readonly redis: Redis;
  private readonly limiter: InstanceType<typeof RateLimiterRedis>;
  private readonly memory = new MemoryCounters();
  private down: string | undefined = 'Redis has not answered yet';
  private skipUntil = 0;

  constructor(
    url: string,
    prefix: string,
    private readonly log: (msg: string) => void,
  ) {
    // No offline queue and no retries per command: a command while Redis is
    // away fails at once, and memory counts instead of waiting.
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: 500,
      retryStrategy: (times) => Math.min(times * 250, 5000),
    });
    // Never the URL (it may hold a password, in its user part or its query) and
    // only the error's code (its message names the host and port): /readyz is open to anyone.
    this.redis.on('error', (err: Error & { code?: string }) => this.wentDown(`Redis (REDIS_URL) is unreachable (${err.code ?? 'error'})`));
    this.redis.on('end', () => this.wentDown('Redis (REDIS_URL) closed the connection'));
    this.redis.on('ready', () => {
      if (this.down && this.down !== 'Redis has not answered yet')
        this.log('kbchat gateway: Redis answers again; rate limits are counted on it across processes');
      this.down = undefined;
      this.skipUntil = 0;
    });
    // The points it may count up to are the largest number: it never refuses, the caller compares.
    this.limiter = new RateLimiterRedis({
      points: Number.MAX_SAFE_INTEGER,
      duration: 60,
      storeClient: this.redis,
      keyPrefix: `${prefix}:rl`,
      rejectIfRedisNotReady: true,
    });
  }

  private wentDown(why: string): void {
    if (!this.down || this.down === 'Redis has not answered yet') this.log(`kbchat gateway: ${why}; rate limits are counted per process until it answers`);
    this.down = why;
  }

  async add(key: string, points: number, windowMs: number): Promise<WindowCount> {
    if (Date.now() >= this.skipUntil) {
      try {
        const opts = { customDuration: Math.ceil(windowMs / 1000) };
        const res = points >= 0 ? await this.limiter.penalty(key, points, opts) : await this.limiter.reward(key, -points, opts);
        return { points: res.consumedPoints, msLeft: res.msBeforeNext < 0 ? windowMs : res.msBeforeNext };
      } catch (err) {
        // Not ready, a timeout, a refused script: memory counts for a while.
        this.skipUntil = Date.now() + REDIS_RETRY_MS;
        if (this.redis.status === 'ready')
          this.wentDown(`Redis (REDIS_URL) did not count a window (${(err as Error & { code?: string }).code ?? (err as Error).name})`);
      }
    }
    return this.memory.add(key, points, windowMs);
  }

  problem(): string | undefined {
    return this.down && `${this.down}: rate limits are counted per process`;
  }

  async close(): Promise<void> {
    this.redis.removeAllListeners('error');
    this.redis.on('error', () => {});
    this.redis.disconnect();
  }
}

class StoreCounters implements Counters {
  readonly where = 'store';
  private readonly memory = new MemoryCounters();
  private down: string | undefined;
  private sweeper: NodeJS.Timeout;

  constructor(
    private readonly store: RateLimitsStore,
    private readonly log: (msg: string) => void,
  ) {
    this.sweeper = setInterval(() => this.store.sweep().catch(() => {}), 10 * 60_000);
    this.sweeper.unref();
  }

  async add(key: string, points: number, windowMs: number): Promise<WindowCount> {
    try {
      const now = Date.now();
      const r = await this.store.add(key, points, windowMs, now);
      this.down = undefined;
      return { points: r.points, msLeft: Math.max(0, r.expiresAt - now) };
    } catch (err) {
      if (!this.down) this.log(`kbchat gateway: the store did not count a rate-limit window (${(err as Error).message}); counting per process meanwhile`);
      this.down = `the store did not count the last window (${(err as Error).message})`;
      return this.memory.add(key, points, windowMs);
    }
  }

  problem(): string | undefined {
    return this.down && `${this.down}: rate limits are counted per process`;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

/** The counters for this process: Redis where a URL is given, the store where it is shared, else memory. */
export function openCounters(o: {
  redisUrl?: string;
  redisPrefix: string;
  store: RateLimitsStore;
  sharedStore: boolean;
  log: (msg: string) => void;
}): Counters {
  if (o.redisUrl) return new RedisCounters(o.redisUrl, o.redisPrefix, o.log);
  if (o.sharedStore) return new StoreCounters(o.store, o.log);
  return new MemoryCounters();
}
