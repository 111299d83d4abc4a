// The gateway console's strings (English and Chinese).
export const en = {
  'console.title': 'kbchat gateway',
  'console.signinTitle': 'Sign in to the gateway',
  'console.unreachable': 'The gateway did not answer: is it running?',
  'console.nav.dashboard': 'Dashboard',
  'console.nav.channels': 'Channels',
  'console.nav.users': 'Users',
  'console.nav.tokens': 'Tokens',
  'console.nav.logs': 'Logs',
  'console.nav.prices': 'Prices',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'console.title': 'kbchat 网关',
  'console.signinTitle': '登录网关',
  'console.unreachable': '网关没有响应：它是否在运行？',
  'console.nav.dashboard': '仪表盘',
  'console.nav.channels': '渠道',
  'console.nav.users': '用户',
  'console.nav.tokens': '令牌',
  'console.nav.logs': '日志',
  'console.nav.prices': '价格',
};
