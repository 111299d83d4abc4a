// Prices per model, in currency units per 1M tokens, held as integer
// micro-units per 1M tokens. A charge is ceil((in*pIn + out*pOut) / 1e6)
// micro-units: integers all the way, rounded in the gateway's favour by at
// most one micro-unit; a group's ratio then rounds up once more (atRatio), so
// a price with fractions of a micro-unit per token may round up by the ratio
// in micro-units (2 at ratio 2), never down. one-api style ratios convert exactly: model ratio 1 is
// 2 units per 1M input tokens, and output costs input x completion ratio.
import { RefreshedBook } from '../refreshed-book.js';
import type { PriceRow, PricesStore } from './prices-store.js';

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

/**
 * `micros` at a group's ratio (in millionths: 500,000 is half price), rounded
 * up to a whole micro-unit, exactly: ceil(micros x ratio / 1e6) in integers.
 */
export function atRatio(micros: number, ratioMicros: number): number {
  if (ratioMicros === MICROS || micros <= 0) return micros;
  const product = micros * ratioMicros;
  if (Number.isSafeInteger(product)) {
    const rest = product % MICROS;
    return (product - rest) / MICROS + (rest > 0 ? 1 : 0);
  }
  const big = BigInt(micros) * BigInt(ratioMicros);
  const whole = big / BigInt(MICROS);
  return Number(big % BigInt(MICROS) > 0n ? whole + 1n : whole);
}

export class PriceBook extends RefreshedBook<PriceRow[]> {
  private prices = new Map<string, ModelPrice>();
  private free = new Set<string>();

  constructor(
    private readonly store: PricesStore,
    private readonly defaults: { inputPrice: number; outputPrice: number },
  ) {
    super();
  }

  protected read(): Promise<PriceRow[]> {
    return this.store.list();
  }

  protected take(rows: PriceRow[]): void {
    this.prices = new Map(rows.map((r) => [r.model, { model: r.model, inputPrice: r.input_price, outputPrice: r.output_price }]));
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
    await this.edit(this.store.upsert(model, inputPrice, outputPrice));
    this.prices.set(model, { model, inputPrice, outputPrice });
  }

  async remove(model: string): Promise<boolean> {
    const deleted = await this.edit(this.store.delete(model));
    this.prices.delete(model);
    return deleted;
  }
}
