// Strings of the chat pages. English first; the Chinese table must have every key.
export const en = {
  'chat.placeholder': '',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'chat.placeholder': '',
};
