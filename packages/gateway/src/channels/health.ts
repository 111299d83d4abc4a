// Auto-disable and re-enable, per channel AND model (one broken model must not
// take a whole channel down). A channel+model is disabled after `threshold`
// failures in a row inside `windowMs` (a success resets the count, so one
// error or a word in a message never disables anything); the reason is
// stored with the failures that did it (their times and errors, for the
// console), every process sees it at its next refresh, and a periodic test
// re-enables it when it answers again.
import type { ChannelFailure } from '@kbchat/contracts';
import type { ChannelRegistry } from './registry.js';
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
}
