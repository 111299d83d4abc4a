// Prices per model, in currency units per 1M tokens, held as integer
// micro-units per 1M tokens. A charge is ceil((in*pIn + out*pOut) / 1e6)
// micro-units: integers all the way, rounded in the gateway's favour by at
// most one micro-unit. one-api style ratios convert exactly: model ratio 1 is
// 2 units per 1M input tokens, and output costs input x completion ratio.
import type { PricesStore } from './prices-store.js';

export const MICROS = 1_000_000;

export interface ModelPrice {
  model: string;
  inputPrice: number;
  outputPrice: number;
}

export function unitsToMicros(units: number): number {
  return Math.round(units * MICROS);
}

export function ratioToPrice(modelRatio: number, completionRatio = 1): { input: number; output: number } {
  return { input: modelRatio * 2, output: modelRatio * 2 * completionRatio };
}

export function costMicros(price: { inputPrice: number; outputPrice: number }, inputTokens: number, outputTokens: number): number {
  const total = inputTokens * price.inputPrice + outputTokens * price.outputPrice;
  return total <= 0 ? 0 : Math.ceil(total / MICROS);
}

export class PriceBook {
  private prices = new Map<string, ModelPrice>();
  private free = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** Counts this process's own edits, so that a refresh that read the store before one does not undo it. */
  private edits = 0;

  constructor(
    private readonly store: PricesStore,
    private readonly defaults: { inputPrice: number; outputPrice: number },
  ) {}

  async load(): Promise<void> {
    const edits = this.edits;
    const rows = await this.store.list();
    // A price set here while the store was read: that read may predate it, the next one will not.
    if (edits !== this.edits) return;
    this.prices = new Map(rows.map((r) => [r.model, { model: r.model, inputPrice: r.input_price, outputPrice: r.output_price }]));
  }

  /** Re-reads prices every `everyMs`, so that a price set or deleted by another process is in force here too. */
  startRefresh(everyMs: number, onError: (err: Error) => void): void {
    this.timer = setInterval(() => this.load().catch(onError), everyMs);
    this.timer.unref();
  }

  stopRefresh(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Models served in-process (issue: local models) are free unless priced. */
  markFree(model: string): void {
    this.free.add(model);
  }

  /** How a model is charged: its own price, free (served in-process, unpriced), or the default. */
  chargedAs(model: string): 'set' | 'free' | 'default' {
    if (this.prices.has(model)) return 'set';
    return this.free.has(model) ? 'free' : 'default';
  }

  priceOf(model: string): ModelPrice {
    const p = this.prices.get(model);
    if (p) return p;
    if (this.free.has(model)) return { model, inputPrice: 0, outputPrice: 0 };
    return { model, ...this.defaults };
  }

  list(): ModelPrice[] {
    return [...this.prices.values()].sort((a, b) => a.model.localeCompare(b.model));
  }

  async set(model: string, inputPrice: number, outputPrice: number): Promise<void> {
    await this.store.upsert(model, inputPrice, outputPrice);
    this.edits++;
    this.prices.set(model, { model, inputPrice, outputPrice });
  }

  async remove(model: string): Promise<boolean> {
    const deleted = await this.store.delete(model);
    this.edits++;
    this.prices.delete(model);
    return deleted;
  }
}
