// The channels page's strings (English and Chinese).
export const en = {
  'channels.title': 'Channels',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'channels.title': '渠道',
};
