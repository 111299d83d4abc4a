// The app's strings: every area's keys are its own. A key in two areas'
// messages.ts would merge silently, the later text shown in the earlier
// area's page (the console's logs page once renamed the platform's "Chat log").
import { describe, expect, it } from 'vitest';
import { addMessages, formatCount, translate } from '../src/i18n';
import { areas } from '../src/message-areas';

// Every area's tables, as the entries add theirs.
addMessages(...areas);

describe('the messages of the web app', () => {
  it('has no key in two areas, and every English key translated', () => {
    const seen = new Map<string, number>();
    const twice: string[] = [];
    areas.forEach((area, i) => {
      for (const key of Object.keys(area.en)) {
        if (seen.has(key)) twice.push(`${key} (areas ${seen.get(key)} and ${i})`);
        seen.set(key, i);
      }
      expect(Object.keys(area.zh).sort()).toEqual(Object.keys(area.en).sort());
    });
    expect(twice).toEqual([]);
    expect(seen.size).toBeGreaterThan(500);
  });

  it('counts in the form the number takes: one collection, two collections (and Chinese has one form)', () => {
    expect(translate('en', 'datasets.collections.total', { n: 1 })).toBe('1 collection');
    expect(translate('en', 'datasets.collections.total', { n: 2 })).toBe('2 collections');
    expect(translate('en', 'datasets.collections.total', { n: 0 })).toBe('0 collections');
    expect(translate('en', 'datasets.size', { collections: 1, chunks: 3 })).toBe('1 collection · 3 chunks');
    expect(translate('en', 'datasets.progress.done', { done: 1, total: 1 })).toBe('1 of 1 chunk indexed');
    expect(translate('en', 'setup.failed', { count: 1, name: 'Manuals' })).toBe('Indexing failed for 1 item in “Manuals”.');
    expect(translate('en', 'channels.summary', { tested: 1, channels: 2, seconds: 3, ok: 1, failed: 0 })).toBe(
      'Tested 1 model on 2 channels in 3 s: 1 passed, 0 failed.',
    );
    expect(translate('zh', 'datasets.collections.total', { n: 1 })).toBe('1 个集合');
    expect(translate('zh', 'datasets.collections.total', { n: 2 })).toBe('2 个集合');
    // Counts come formatted in the reader's language: the form is still the number's.
    expect(formatCount(148023, 'en')).toBe('148,023');
    expect(formatCount(148023, 'zh')).toBe('148,023');
    expect(translate('en', 'datasets.collections.total', { n: formatCount(1000, 'en') })).toBe('1,000 collections');
    expect(translate('en', 'datasets.progress.done', { done: formatCount(1, 'en'), total: formatCount(1, 'en') })).toBe('1 of 1 chunk indexed');
    expect(translate('en', 'datasets.progress.done', { done: formatCount(0, 'en'), total: formatCount(148023, 'en') })).toBe('0 of 148,023 chunks indexed');
  });

  it('leaves no "(s)" for a plural in English', () => {
    const left = areas.flatMap((area) =>
      Object.entries(area.en)
        .filter(([, text]) => /\w\(s\)/.test(text))
        .map(([key]) => key),
    );
    expect(left).toEqual([]);
    // Each plural form names a value its message is given elsewhere too, so the count is shown beside it.
    for (const area of areas)
      for (const [key, text] of Object.entries(area.en))
        for (const [, name] of text.matchAll(/\{(\w+)\|[^|{}]*\|[^|{}]*\}/g)) expect(text, key).toContain(`{${name}}`);
  });
});
