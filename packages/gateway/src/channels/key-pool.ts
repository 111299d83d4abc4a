// A channel's key may hold several keys, one a line (as new-api): a pool.
// Requests take its enabled keys in turn (round-robin, the default: every key
// carries its share even at a few requests a minute) or at random (the
// channel's `keyStrategy` option). A key the upstream refuses or says is out
// of quota is disabled alone (health.ts) and the request goes on with another
// key of the same channel; only when every key is disabled is the channel no
// longer picked. A channel of one key is no pool: it fails as it always did.
import type { PublicChannelKey } from '@kbchat/contracts';
import { keyHint } from '../accounts/secrets.js';
export type KeyStrategy = 'round-robin' | 'random';

/** A pool key's disabled state, as stored (channel_key_state): the key named by its fingerprint. */
export interface DisabledKey {
  channel_id: number;
  key_fp: string;
  disabled_at: number;
  reason: string;
}

/**
 * The keys of a channel's key text: one a line, each trimmed, blank lines
 * dropped. A key without a line break is taken exactly as it was before pools.
 */
export function splitKeys(text: string): string[] {
  if (!text.includes('\n')) return text === '' ? [] : [text];
  return text
    .split('\n')
    .map((k) => k.trim())
    .filter((k) => k !== '');
}

/** One key of a pool; `channel` is the channel as a request sees it with this key. */
export class PoolKey<C> {
  disabled: DisabledKey | undefined = undefined;

  constructor(
    readonly index: number,
    readonly fp: string,
    readonly hint: string,
    readonly channel: C,
  ) {}
}

export class KeyPool<C> {
  readonly keys: PoolKey<C>[] = [];
  enabledCount = 0;
  private turn = 0;

  constructor(readonly strategy: KeyStrategy) {}

  add(key: PoolKey<C>): void {
    this.keys.push(key);
    if (!key.disabled) this.enabledCount++;
  }

  /**
   * The key for the next attempt: the next enabled one in turn, or one of the
   * enabled ones at random. When none is enabled (another request has just
   * disabled the last), the next in turn: the registry no longer picks such a
   * channel, so this is only ever a request already under way.
   */
  pick(): PoolKey<C> {
    const keys = this.keys;
    const n = keys.length;
    if (this.strategy === 'random' && this.enabledCount > 0) {
      let r = Math.floor(Math.random() * this.enabledCount);
      for (const k of keys) if (k.disabled === undefined && r-- === 0) return k;
    }
    for (let i = 0; i < n; i++) {
      const at = (this.turn + i) % n;
      const k = keys[at]!;
      if (k.disabled === undefined || this.enabledCount === 0) {
        this.turn = (at + 1) % n;
        return k;
      }
    }
    return keys[0]!;
  }

  /** Sets the state of the key with this fingerprint (on every line that holds it). */
  setState(fp: string, state: DisabledKey | undefined): void {
    let enabled = 0;
    for (const k of this.keys) {
      if (k.fp === fp) k.disabled = state;
      if (k.disabled === undefined) enabled++;
    }
    this.enabledCount = enabled;
  }

  /** Goes on from the pool this one replaces (a refresh), so that the turn does not start again at the first key. */
  continueFrom(old: KeyPool<C> | undefined): void {
    if (old && this.keys.length) this.turn = old.turn % this.keys.length;
  }
}

/** The channel's keys as the admin API shows them: each by its hint, with its state in a pool. */
export function publicKeys(key: string, pool: KeyPool<unknown> | undefined, retestAt: (disabledAt: number) => number | null): PublicChannelKey[] {
  if (!pool) return key ? [{ index: 0, hint: keyHint(key), status: 'enabled', reason: null, disabled_at: null, retest_at: null }] : [];
  return pool.keys.map((k) => {
    const at = k.disabled ? Number(k.disabled.disabled_at) : null;
    return {
      index: k.index,
      hint: k.hint,
      status: at === null ? 'enabled' : 'disabled',
      reason: k.disabled?.reason ?? null,
      disabled_at: at,
      retest_at: at === null ? null : retestAt(at),
    };
  });
}
