// Every string the app shows goes through t(): English and Chinese, switchable,
// remembered in this browser.
import { useSyncExternalStore } from 'react';

const en = {
  'app.title': 'kbchat',
  'signin.title': 'Sign in to kbchat',
  'signin.username': 'Username',
  'signin.password': 'Password',
  'signin.submit': 'Sign in',
  'signin.busy': 'Signing in…',
  'nav.datasets': 'Knowledge bases',
  'nav.signout': 'Sign out',
  'datasets.empty': 'No knowledge bases yet.',
  'datasets.loading': 'Loading…',
  'datasets.model': 'Vector model',
  'error.title': 'Something went wrong here',
  'error.retry': 'Try again',
  'error.unreachable': 'The platform did not answer: is kbchat running?',
  'lang.switch': '中文',
} as const;

export type MessageKey = keyof typeof en;

const zh: Record<MessageKey, string> = {
  'app.title': 'kbchat',
  'signin.title': '登录 kbchat',
  'signin.username': '用户名',
  'signin.password': '密码',
  'signin.submit': '登录',
  'signin.busy': '正在登录…',
  'nav.datasets': '知识库',
  'nav.signout': '退出登录',
  'datasets.empty': '还没有知识库。',
  'datasets.loading': '加载中…',
  'datasets.model': '向量模型',
  'error.title': '这里出错了',
  'error.retry': '重试',
  'error.unreachable': '平台没有响应：kbchat 是否在运行？',
  'lang.switch': 'English',
};

export type Lang = 'en' | 'zh';
const dictionaries: Record<Lang, Record<MessageKey, string>> = { en, zh };

function initial(): Lang {
  const saved = localStorage.getItem('kbchat.lang');
  if (saved === 'en' || saved === 'zh') return saved;
  return navigator.language.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

let lang: Lang = initial();
const listeners = new Set<() => void>();

export function setLang(next: Lang): void {
  lang = next;
  localStorage.setItem('kbchat.lang', next);
  document.documentElement.lang = next === 'zh' ? 'zh-CN' : 'en';
  listeners.forEach((l) => l());
}

export function useLang(): { lang: Lang; t: (key: MessageKey) => string } {
  const current = useSyncExternalStore(
    (l) => (listeners.add(l), () => listeners.delete(l)),
    () => lang,
  );
  return { lang: current, t: (key) => dictionaries[current][key] };
}
