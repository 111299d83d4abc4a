// The prices page's strings (English and Chinese).
export const en = {
  'prices.title': 'Prices',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'prices.title': '价格',
};
