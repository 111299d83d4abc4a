// The logs page's strings (English and Chinese).
export const en = {
  'logs.title': 'Logs',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'logs.title': '日志',
};
