// one-api's ratios and the gateway's units per 1M tokens, as the gateway
// converts them (packages/gateway/src/accounts/pricing.ts ratioToPrice):
// model ratio 1 = $0.002 per 1K input tokens = 2 units per 1M input tokens;
// output = input x completion ratio. Only for showing what a form will send:
// the gateway converts what is sent, and the page shows what it then holds.

/** Units per 1M input tokens that model ratio 1 is. */
export const UNITS_PER_RATIO = 2;

export function ratioToUnits(modelRatio: number, completionRatio: number): { input: number; output: number } {
  return { input: modelRatio * UNITS_PER_RATIO, output: modelRatio * UNITS_PER_RATIO * completionRatio };
}

/** completion_ratio is null when input is free (no ratio makes the output's price from it). */
export function unitsToRatio(input: number, output: number): { model_ratio: number; completion_ratio: number | null } {
  return { model_ratio: input / UNITS_PER_RATIO, completion_ratio: input > 0 ? output / input : null };
}

/** A number as a form field or a cell shows it: no float noise (0.1 * 3), no exponent, no grouping. */
export function showNumber(n: number): string {
  return Number(n.toPrecision(12)).toLocaleString('en-US', { maximumFractionDigits: 12, useGrouping: false });
}

/** The price's API path: a model name may hold '/', '%' or spaces. */
export const pricePath = (model: string): string => `/api/prices/${encodeURIComponent(model)}`;

/** A model's fallbacks' API path, encoded as the price's is. */
export const fallbacksPath = (model: string): string => `/api/fallbacks/${encodeURIComponent(model)}`;
