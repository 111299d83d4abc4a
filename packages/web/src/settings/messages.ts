// Strings of the settings pages. English first; the Chinese table must have every key.
export const en = {
  'settings.placeholder': '',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'settings.placeholder': '',
};
