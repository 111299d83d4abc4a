// Auto-disable and re-enable, per channel AND model (one broken model must not
// take a whole channel down). A channel+model is disabled after `threshold`
// failures in a row inside `windowMs` (a success resets the count, so one
// error or a word in a message never disables anything); the reason is
// stored, every process sees it at its next refresh, and a periodic test
// re-enables it when it answers again.
import type { ChannelRegistry } from './registry.js';
import type { ChannelsStore } from './store.js';

export interface HealthOptions {
  threshold: number;
  windowMs: number;
}

export class ChannelHealth {
  private failures = new Map<string, number[]>();

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
    const times = (this.failures.get(key) ?? []).filter((t) => now - t < this.opts.windowMs);
    times.push(now);
    this.failures.set(key, times);
    if (times.length < this.opts.threshold || this.registry.isModelDisabled(channelId, model)) return false;
    this.failures.delete(key);
    const text = `auto-disabled after ${times.length} failures in ${Math.round(this.opts.windowMs / 1000)} s; last error: ${reason}`;
    this.registry.markDisabled({ channel_id: channelId, model, disabled_at: now, reason: text });
    await this.store.disableModel(channelId, model, text, now);
    return true;
  }

  async enable(channelId: number, model?: string): Promise<void> {
    await this.store.enableModel(channelId, model);
    for (const d of this.registry.disabledModels()) {
      if (d.channel_id === channelId && (model === undefined || d.model === model)) this.registry.markEnabled(channelId, d.model);
    }
  }
}
