// Where rate-limit windows are counted: on Redis (REDIS_URL), exact across
// every gateway process that shares it; else on the shared database, exact
// too; else (the embedded store, one process) in this process's memory.
// rate-limiter-flexible does the counting on Redis and in memory; the
// database's counting is ours (store.ts), as the library's SQL limiters want
// their own driver pools.
//
// Redis or the database failing never refuses everyone: a window is then
// counted in this process's memory, /readyz says so (without failing), and
// the log says so once per outage.
import { Redis } from 'ioredis';
import flexible from 'rate-limiter-flexible';
import { redactUrl } from '@kbchat/shared';
import type { GatewayError } from '../errors.js';
import type { RateLimitsStore } from './store.js';

const { RateLimiterMemory, RateLimiterRedis } = flexible;

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

type Flexible = InstanceType<typeof RateLimiterMemory>;

/** Adds through a rate-limiter-flexible limiter: it never refuses (points is the largest number), the caller compares. */
async function addFlexible(limiter: Flexible, key: string, points: number, windowMs: number): Promise<WindowCount> {
  const opts = { customDuration: Math.ceil(windowMs / 1000) };
  const res = points >= 0 ? await limiter.penalty(key, points, opts) : await limiter.reward(key, -points, opts);
  return { points: res.consumedPoints, msLeft: res.msBeforeNext < 0 ? windowMs : res.msBeforeNext };
}

const UNLIMITED = { points: Number.MAX_SAFE_INTEGER, duration: 60 };

class ProcessCounters implements Counters {
  readonly where = 'process';
  private readonly memory = new RateLimiterMemory(UNLIMITED);

  add(key: string, points: number, windowMs: number): Promise<WindowCount> {
    return addFlexible(this.memory, key, points, windowMs);
  }

  problem(): undefined {
    return undefined;
  }

  async close(): Promise<void> {}
}

class RedisCounters implements Counters {
  readonly where = 'redis';
  private readonly redis: Redis;
  private readonly limiter: Flexible;
  private down: string | undefined;

  constructor(
    url: string,
    prefix: string,
    private readonly log: (msg: string) => void,
  ) {
    // No offline queue and no retries per command: a command while Redis is
    // away fails at once, and the memory insurance counts instead of waiting.
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: 1000,
      retryStrategy: (times) => Math.min(times * 250, 5000),
    });
    this.redis.on('error', (err: Error) => this.wentDown(`Redis at ${redactUrl(url)} is unreachable (${err.message})`));
    this.redis.on('end', () => this.wentDown(`Redis at ${redactUrl(url)} closed the connection`));
    this.redis.on('ready', () => {
      if (this.down) this.log('kbchat gateway: Redis answers again; rate limits are counted on it across processes');
      this.down = undefined;
    });
    this.limiter = new RateLimiterRedis({
      ...UNLIMITED,
      storeClient: this.redis,
      keyPrefix: `${prefix}:rl`,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory(UNLIMITED),
    }) as unknown as Flexible;
    this.down = 'Redis has not answered yet';
  }

  private wentDown(why: string): void {
    if (!this.down || this.down === 'Redis has not answered yet') this.log(`kbchat gateway: ${why}; rate limits are counted per process until it answers`);
    this.down = why;
  }

  add(key: string, points: number, windowMs: number): Promise<WindowCount> {
    return addFlexible(this.limiter, key, points, windowMs);
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
  private readonly insurance = new RateLimiterMemory(UNLIMITED);
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
      return addFlexible(this.insurance, key, points, windowMs);
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
  return new ProcessCounters();
}
