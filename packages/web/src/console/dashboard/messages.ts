// The dashboard page's strings (English and Chinese).
export const en = {
  'dashboard.title': 'Dashboard',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'dashboard.title': '仪表盘',
};
