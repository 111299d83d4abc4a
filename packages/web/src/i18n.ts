// Every string the app shows goes through t(): English and Chinese, switchable,
// remembered in this browser. Each area of the app keeps its own messages
// (messages.ts beside its pages), and each page's entry adds only the areas it
// shows (addMessages), so the public share page carries none of the signed-in
// pages' strings. The type of each area's Chinese table makes a missing
// translation a compile error; message-areas.ts lists every area, for the key
// type and a test.
import { useSyncExternalStore } from 'react';
import type { areas } from './message-areas';

/** Every area's keys (distributed over the areas: each area's table is its own object type). */
type KeysOf<T> = T extends unknown ? keyof T : never;
export type MessageKey = KeysOf<(typeof areas)[number]['en']>;

export type Lang = 'en' | 'zh';
const dictionaries: Record<Lang, Partial<Record<MessageKey, string>>> = { en: {}, zh: {} };

/** One area's tables, as its messages.ts exports them. */
export interface MessageArea {
  en: Readonly<Record<string, string>>;
  zh: Readonly<Record<string, string>>;
}

/**
 * Adds areas' tables to the ones t() reads: each entry calls it once, before
 * it renders, with the areas of the pages it shows (a key of an area it did
 * not add is shown as the key itself; the web build's test checks each page's
 * scripts use no such key).
 */
export function addMessages(...added: readonly MessageArea[]): void {
  for (const area of added) {
    Object.assign(dictionaries.en, area.en);
    Object.assign(dictionaries.zh, area.zh);
  }
}

/**
 * The browser's storage, or undefined where it is refused: a page framed by
 * another site (the share page in the embed script's panel) gets a
 * SecurityError from merely reading `localStorage` when the visitor blocks
 * third-party storage, as Chromium does by default in some modes.
 */
export function browserStorage(): Storage | undefined {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    return undefined;
  }
}

function initial(): Lang {
  // Outside a browser (the messages' unit tests) there is neither: English.
  const saved = browserStorage()?.getItem('kbchat.lang');
  if (saved === 'en' || saved === 'zh') return saved;
  return globalThis.navigator?.language?.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

let lang: Lang = initial();
const listeners = new Set<() => void>();

export function setLang(next: Lang): void {
  lang = next;
  try {
    browserStorage()?.setItem('kbchat.lang', next);
  } catch {
    // Storage full or refused: the choice holds for this page.
  }
  document.documentElement.lang = next === 'zh' ? 'zh-CN' : 'en';
  listeners.forEach((l) => l());
}

/**
 * `{name}` in a message is replaced by vars.name; `{name|one|other}` by the
 * form the number vars.name takes in the language ("{n} {n|collection|collections}").
 */
export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

const pluralRules: Record<Lang, Intl.PluralRules> = { en: new Intl.PluralRules('en'), zh: new Intl.PluralRules('zh') };
const countFormats: Record<Lang, Intl.NumberFormat> = { en: new Intl.NumberFormat('en-US'), zh: new Intl.NumberFormat('zh-CN') };

/** A count as the reader's language writes it ("148,023"). */
export const formatCount = (n: number, current: Lang): string => countFormats[current].format(n);

/** The number a var holds; a formatted count ("148,023") counts without its grouping. */
const numberOf = (v: string | number) => (typeof v === 'number' ? v : Number(v.replace(/[,\s]/g, '')));

export function translate(current: Lang, key: MessageKey, vars?: Record<string, string | number>): string {
  const text = dictionaries[current][key] ?? key;
  if (!vars) return text;
  return text
    .replace(/\{(\w+)\|([^|{}]*)\|([^|{}]*)\}/g, (m, name: string, one: string, other: string) =>
      name in vars ? (pluralRules[current].select(numberOf(vars[name]!)) === 'one' ? one : other) : m,
    )
    .replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
}

/** `count`: formatCount in the current language. */
export function useLang(): { lang: Lang; t: Translate; count: (n: number) => string } {
  const current = useSyncExternalStore(
    (l) => (listeners.add(l), () => listeners.delete(l)),
    () => lang,
  );
  return { lang: current, t: (key, vars) => translate(current, key, vars), count: (n) => formatCount(n, current) };
}
