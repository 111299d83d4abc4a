// Auto-disable and re-enable, per channel AND model (one broken model must not
// take a whole channel down). A channel+model is disabled after `threshold`
// failures in a row inside `windowMs` (a success resets the count, so one
// error or a word in a message never disables anything); the reason is
// stored with the failures that did it (their times and errors, for the
// console), every process sees it at its next refresh, and a periodic test
// re-enables it when it answers again. A key of a pool (key-pool.ts) is
// disabled at its first refusal instead: the request goes on with another key,
// so nobody waits on a key that the upstream has said it will not take.
import type { ChannelFailure } from '@kbchat/contracts';
import type { PoolKey } from './key-pool.js';
import type { Channel, ChannelRegistry } from './registry.js';
import type { ChannelsStore } from './store.js';

export type { ChannelFailure };

/** The most failures kept with a disabled model, and of each error's text. */
const KEPT_FAILURES = 10;
const KEPT_ERROR_CHARS = 1000;

export interface HealthOptions {
  threshold: number;
  windowMs: number;
}

export class ChannelHealth {
  private failures = new Map<string, ChannelFailure[]>();

  constructor(
    private readonly store: ChannelsStore,
    private readonly registry: ChannelRegistry,
    private readonly opts: HealthOptions,
  ) {}

  recordSuccess(channelId: number, model: string): void {
    if (this.failures.size) this.failures.delete(`${channelId}:${model}`);
  }

  /** Counts a failure; returns true when this one disabled the channel+model. */
  async recordFailure(channelId: number, model: string, reason: string, now = Date.now()): Promise<boolean> {
    if (this.opts.threshold <= 0) return false;
    const key = `${channelId}:${model}`;
    const recent = (this.failures.get(key) ?? []).filter((f) => now - f.at < this.opts.windowMs);
    recent.push({ at: now, error: reason.slice(0, KEPT_ERROR_CHARS) });
    this.failures.set(key, recent);
    if (recent.length < this.opts.threshold || this.registry.isModelDisabled(channelId, model)) return false;
    this.failures.delete(key);
    const text = `auto-disabled after ${recent.length} failures in ${Math.round(this.opts.windowMs / 1000)} s; last error: ${reason}`;
    const failures = JSON.stringify(recent.slice(-KEPT_FAILURES));
    this.registry.markDisabled({ channel_id: channelId, model, disabled_at: now, reason: text, failures });
    await this.store.disableModel(channelId, model, text, now, failures);
    return true;
  }

  async enable(channelId: number, model?: string): Promise<void> {
    await this.store.enableModel(channelId, model);
    for (const d of this.registry.disabledModels()) {
      if (d.channel_id === channelId && (model === undefined || d.model === model)) this.registry.markEnabled(channelId, d.model);
    }
  }

  /**
   * A key of a pool was refused (401/402/403) or is out of quota: it is
   * disabled alone, at once in this process and in every other at its next
   * refresh, until the re-test loop or an administrator enables it again.
   */
  async disableKey(channelId: number, key: PoolKey<Channel>, reason: string, now = Date.now()): Promise<void> {
    if (key.disabled) return;
    const state = { channel_id: channelId, key_fp: key.fp, disabled_at: now, reason: reason.slice(0, KEPT_ERROR_CHARS) };
    this.registry.markKeyDisabled(state);
    await this.store.disableKey(state);
  }

  /** Enables a disabled key of a channel's pool (by fingerprint), or all of them. */
  async enableKeys(channelId: number, fp?: string): Promise<void> {
    await this.store.enableKeys(channelId, fp);
    for (const d of this.registry.disabledKeys()) {
      if (d.channel_id === channelId && (fp === undefined || d.key_fp === fp)) this.registry.markKeyEnabled(channelId, d.key_fp);
    }
  }
}
