// The tokens page's strings (English and Chinese).
export const en = {
  'tokens.title': 'Tokens',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'tokens.title': '令牌',
};
