// Channel tests: one request per model suited to its kind, bounded in time;
// a channel's models, every enabled channel at once, and the periodic re-test
// that re-enables auto-disabled models and the disabled keys of pools. Every
// model test's result is kept as the channel model's latest (channel_tests), so
// every process and a reload show it; a key's re-test is not a model's test.
import type { ModelTestResult, ChannelModelTestResult, TestAllResult, RetestResult } from '@kbchat/contracts';
import { endpointOfModel } from '../providers/index.js';
import type { UpstreamClient } from '../relay/upstream.js';
import { UpstreamFailure } from '../relay/upstream.js';
import { postWire, TranslatedFailure, wireFailure } from '../relay/chat-wire.js';
import type { ChannelHealth } from './health.js';
import type { DisabledKey } from './key-pool.js';
import type { Channel, ChannelRegistry } from './registry.js';
import type { ChannelsStore } from './store.js';

export type { ModelTestResult, ChannelModelTestResult, TestAllResult, RetestResult };

export interface ChannelTesterOptions {
  testTimeoutMs: number;
  /** Disabled models of one channel re-tested at once (channels run side by side). */
  retestConcurrency: number;
}

/** Tests of one channel's models at once (a channel may list hundreds). */
export const CHANNEL_TEST_CONCURRENCY = 8;
export const DEFAULT_TEST_ALL_CONCURRENCY = 8;
/** The most of a test's error text kept (upstream errors can be whole HTML pages). */
const KEPT_ERROR_CHARS = 2000;

/** Runs fn over items with at most `concurrency` at once; stops starting new ones once `signal` aborts. */
async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal?.aborted) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, worker));
}

export class ChannelTester {
  private loop: { timer: NodeJS.Timeout; startedAt: number; intervalMs: number } | undefined;
  private run: { promise: Promise<void>; startedAt: number } | undefined;
  private readonly loopAbort = new AbortController();

  constructor(
    private readonly store: ChannelsStore,
    private readonly registry: ChannelRegistry,
    private readonly health: ChannelHealth,
    private readonly upstream: UpstreamClient,
    private readonly opts: ChannelTesterOptions,
  ) {}

  /**
   * Sends one test request and keeps its result. It is bounded by `timeoutMs`
   * (default testTimeoutMs), so that a hanging upstream cannot hold a test, or
   * the periodic re-test, for the whole upstream timeout; `signal` ends it
   * early (shutting down, or the caller went away).
   */
  async testModel(channel: Channel, model: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<ModelTestResult> {
    const result = await this.send(channel, model, opts);
    // An aborted test says nothing about the channel: it does not replace the last real one.
    if (!opts.signal?.aborted) {
      await this.store.saveTest({
        channel_id: channel.id,
        model,
        tested_at: result.tested_at,
        ok: result.ok,
        latency_ms: result.latency_ms,
        status: result.status ?? null,
        error: result.error?.slice(0, KEPT_ERROR_CHARS) ?? null,
      });
    }
    return result;
  }

  private async send(channel: Channel, model: string, opts: { timeoutMs?: number; signal?: AbortSignal }): Promise<ModelTestResult> {
    // A pool is tested with its next key, as a request would be.
    if (channel.pool) channel = channel.pool.pick().channel;
    const endpoint = endpointOfModel(model, channel.options);
    const upstreamModel = channel.modelMapping[model] ?? model;
    const body =
      endpoint === 'embeddings'
        ? { model: upstreamModel, input: 'kbchat channel test' }
        : endpoint === 'rerank'
          ? { model: upstreamModel, query: 'channel test', documents: ['a channel test', 'something else'] }
          : { model: upstreamModel, messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 8 };
    const timeoutMs = opts.timeoutMs ?? this.opts.testTimeoutMs;
    // One controller per test, ended by the timer or by the caller's signal. (Not
    // AbortSignal.any: that ties every test to a long-lived signal.)
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
    timer.unref();
    const stop = () => abort.abort();
    opts.signal?.addEventListener('abort', stop, { once: true });
    const started = Date.now();
    const base = { model, endpoint, tested_at: started };
    try {
      if (opts.signal?.aborted) throw new Error('channel test aborted');
      const wire = channel.provider.wire;
      if (wire) {
        // A provider with its own wire format gets the same test in its format, and its answer must translate.
        if (endpoint === 'embeddings' && wire.embeddings) {
          await postWire(this.upstream, wire, wire.embeddings.target(upstreamModel, channel), wire.embeddings.requests(body, upstreamModel)[0], abort.signal);
        } else {
          const answer = await postWire(
            this.upstream,
            wire,
            wire.chatTarget(upstreamModel, false, channel),
            wire.chatRequest(body, upstreamModel),
            abort.signal,
          );
          try {
            wire.chatResponse(answer, { model });
          } catch (err) {
            throw wireFailure(wire, err);
          }
        }
        return { ...base, ok: true, latency_ms: Date.now() - started, status: 200 };
      }
      const answer = await this.upstream.postJson(channel.provider.target(endpoint, upstreamModel, channel), JSON.stringify(body), abort.signal);
      return { ...base, ok: true, latency_ms: Date.now() - started, status: answer.status };
    } catch (err) {
      const latency_ms = Date.now() - started;
      if (timedOut) return { ...base, ok: false, latency_ms, error: `channel test timed out after ${timeoutMs} ms` };
      if (opts.signal?.aborted) return { ...base, ok: false, latency_ms, error: 'channel test aborted' };
      const status = err instanceof TranslatedFailure ? err.error.status : err instanceof UpstreamFailure ? err.status : undefined;
      return { ...base, ok: false, latency_ms, status, error: (err as Error).message };
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', stop);
    }
  }

  /** Tests the given models of one channel, a few at once; results in the models' order. */
  async testChannel(channel: Channel, models: readonly string[], signal?: AbortSignal): Promise<ModelTestResult[]> {
    const results = new Map<string, ModelTestResult>();
    await pool(models, CHANNEL_TEST_CONCURRENCY, async (m) => void results.set(m, await this.testModel(channel, m, { signal })), signal);
    return models.flatMap((m) => results.get(m) ?? []);
  }

  /**
   * Tests every model of every enabled channel (auto-disabled models too: the
   * test says whether they answer; it enables nothing), at most `concurrency`
   * requests at once over all channels. The order of the work takes one model
   * of each channel in turn, so that the requests in flight spread over the
   * upstreams; the results come in channel id order, then the models' order.
   */
  async testAll(concurrency = DEFAULT_TEST_ALL_CONCURRENCY, signal?: AbortSignal): Promise<TestAllResult> {
    const started_at = Date.now();
    const rows = (await this.store.list()).filter((r) => r.status === 'enabled');
    const skipped: TestAllResult['skipped'] = [];
    const channels: Channel[] = [];
    for (const row of rows) {
      const channel = this.registry.get(row.id);
      if (channel) channels.push(channel);
      else
        skipped.push({
          channel_id: row.id,
          channel_name: row.name,
          reason:
            this.registry.problems().find((p) => p.startsWith(`channel ${row.id} `) || p.startsWith(`channel ${row.id}:`)) ?? 'not loaded in this process',
        });
    }
    const work: Array<[Channel, string]> = [];
    for (let i = 0, more = true; more; i++) {
      more = false;
      for (const ch of channels) {
        if (i < ch.models.length) {
          work.push([ch, ch.models[i]!]);
          more = true;
        }
      }
    }
    const results = new Map<string, ModelTestResult>();
    await pool(work, concurrency, async ([ch, m]) => void results.set(`${ch.id}:${m}`, await this.testModel(ch, m, { signal })), signal);
    const data = channels.flatMap((ch) =>
      ch.models.flatMap((m) => {
        const r = results.get(`${ch.id}:${m}`);
        return r ? [{ channel_id: ch.id, channel_name: ch.name, ...r }] : [];
      }),
    );
    const ok = data.filter((r) => r.ok).length;
    return { data, skipped, summary: { channels: channels.length, tested: data.length, ok, failed: data.length - ok, started_at, finished_at: Date.now() } };
  }

  /**
   * Re-tests auto-disabled channel models and disabled keys of pools, and
   * enables those that answer again (a key is tried with a model of its
   * channel). Channels are tested side by side, each with at most
   * retestConcurrency requests at once, so one slow channel delays neither the
   * others nor its own other tests by much; every test is bounded by
   * testTimeoutMs. The results keep the order of registry.disabledModels(),
   * then of registry.disabledKeys(). `signal` stops it (shutting down): tests
   * in flight end and no new ones start.
   */
  async retestDisabled(signal?: AbortSignal): Promise<RetestResult[]> {
    const jobs: Array<{ channelId: number; run: (channel: Channel) => Promise<RetestResult | undefined> }> = [
      ...this.registry.disabledModels().map((d) => ({ channelId: d.channel_id, run: (ch: Channel) => this.retestModel(ch, d.model, signal) })),
      ...this.registry.disabledKeys().map((d) => ({ channelId: d.channel_id, run: (ch: Channel) => this.retestKey(ch, d, signal) })),
    ];
    const results: Array<RetestResult | undefined> = new Array(jobs.length);
    const byChannel = new Map<number, number[]>();
    jobs.forEach((job, i) => {
      const list = byChannel.get(job.channelId);
      if (list) list.push(i);
      else byChannel.set(job.channelId, [i]);
    });
    await Promise.all(
      [...byChannel].map(async ([channelId, indexes]) => {
        const channel = this.registry.get(channelId);
        if (channel) await pool(indexes, this.opts.retestConcurrency, async (i) => void (results[i] = await jobs[i]!.run(channel)), signal);
      }),
    );
    return results.filter((r): r is RetestResult => r !== undefined);
  }

  private async retestModel(channel: Channel, model: string, signal?: AbortSignal): Promise<RetestResult> {
    const r = await this.testModel(channel, model, { signal });
    return this.enableIfOk(channel.id, model, r, () => this.health.enable(channel.id, model));
  }

  /** A disabled key of a pool, tried with a model of its channel that is not disabled itself (else the first). */
  private async retestKey(channel: Channel, d: DisabledKey, signal?: AbortSignal): Promise<RetestResult | undefined> {
    const key = channel.pool?.keys.find((k) => k.fp === d.key_fp);
    const model = channel.models.find((m) => !this.registry.isModelDisabled(channel.id, m)) ?? channel.models[0];
    if (!key || model === undefined) return undefined;
    const r = await this.send(key.channel, model, { signal });
    return { ...(await this.enableIfOk(channel.id, model, r, () => this.health.enableKeys(channel.id, d.key_fp))), key: key.hint };
  }

  private async enableIfOk(channelId: number, model: string, r: ModelTestResult, enable: () => Promise<void>): Promise<RetestResult> {
    let enabled = false;
    let error = r.error;
    if (r.ok) {
      try {
        await enable();
        enabled = true;
      } catch (err) {
        error = `the test passed, but enabling failed: ${(err as Error).message}`;
      }
    }
    return { channel_id: channelId, model, enabled, ...(error !== undefined ? { error } : {}) };
  }

  /**
   * The periodic re-test of auto-disabled models, every `intervalMs`. A run can
   * outlast the interval (many disabled models, slow upstreams): a tick while
   * one is in flight is skipped instead of starting another, so runs never pile
   * up. stopRetestLoop() stops the run in flight and waits for it.
   */
  startRetestLoop(intervalMs: number, onError: (err: Error) => void): void {
    if (intervalMs <= 0 || this.loop) return;
    const timer = setInterval(() => {
      if (this.run || this.loopAbort.signal.aborted) return;
      const promise = this.retestDisabled(this.loopAbort.signal).then(
        () => undefined,
        (err: Error) => onError(err),
      );
      this.run = { startedAt: Date.now(), promise: promise.finally(() => (this.run = undefined)) };
    }, intervalMs);
    timer.unref();
    this.loop = { timer, startedAt: Date.now(), intervalMs };
  }

  async stopRetestLoop(): Promise<void> {
    if (this.loop) clearInterval(this.loop.timer);
    this.loopAbort.abort();
    await this.run?.promise;
  }

  /**
   * When this process's re-test loop next tests a model disabled at
   * `disabledAt`: the run in flight if it began after that, else the loop's
   * next tick (a tick that finds a run still going is skipped). Null when the
   * loop is off (CHANNEL_RETEST_INTERVAL_MS=0). Other processes on the store
   * run loops of their own; the earliest of them re-tests it.
   */
  nextRetestAt(disabledAt: number, now = Date.now()): number | null {
    if (!this.loop) return null;
    if (this.run && this.run.startedAt >= disabledAt) return this.run.startedAt;
    const { startedAt, intervalMs } = this.loop;
    return startedAt + (Math.floor((now - startedAt) / intervalMs) + 1) * intervalMs;
  }
}
