// Strings of the apps pages. English first; the Chinese table must have every key.
export const en = {
  'apps.placeholder': '',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'apps.placeholder': '',
};
