// The speed an import's estimate is timed at says what measured it and how
// long ago (issue 34's review: "measured just now on a sample of this file"
// was said of an older probe of another file), in English and Chinese.
import { describe, expect, it } from 'vitest';
import { rateOrigin } from '../src/datasets/estimate-words';
import * as datasetsMessages from '../src/datasets/messages';
import { addMessages, translate, type Lang } from '../src/i18n';

// The datasets pages' tables, as the platform app's entry adds them.
addMessages(datasetsMessages);

const words = (lang: Lang, e: Parameters<typeof rateOrigin>[0], secondsSince = 0) => rateOrigin(e, secondsSince, (key, vars) => translate(lang, key, vars));

describe("where an estimate's speed came from, and when", () => {
  it('says a probe of this very file was made just now, and ages it while the page waits', () => {
    const fresh = { rateSource: 'probe' as const, rateFromThisFile: true, rateAgeSeconds: 0 };
    expect(words('en', fresh)).toBe('measured just now on a sample of this file');
    expect(words('en', fresh, 5 * 60)).toBe('measured 5 min ago on a sample of this file');
    expect(words('zh', fresh)).toBe('刚刚用此文件的部分分块测得');
  });

  it('says an earlier probe is an earlier upload\'s, with its age, never "this file"', () => {
    const reused = { rateSource: 'probe' as const, rateFromThisFile: false, rateAgeSeconds: 190 };
    expect(words('en', reused)).toBe('measured 3 min ago on a sample of an earlier upload');
    expect(words('zh', reused)).toBe('3 分钟前用之前上传的一个文件的部分分块测得');
    expect(words('en', { ...reused, rateAgeSeconds: 3 * 3600 + 50 })).toBe('measured 3 h ago on a sample of an earlier upload');
    expect(words('en', { ...reused, rateAgeSeconds: 1 * 86_400 + 3600 })).toBe('measured 25 h ago on a sample of an earlier upload');
    expect(words('en', { ...reused, rateAgeSeconds: 3 * 86_400 })).toBe('measured 3 days ago on a sample of an earlier upload');
  });

  it('says a speed the workers measured was measured while indexing, and when', () => {
    const measured = { rateSource: 'measured' as const, rateFromThisFile: false, rateAgeSeconds: 30 };
    expect(words('en', measured)).toBe('measured just now while indexing on this server');
    expect(words('en', measured, 40 * 60)).toBe('measured 40 min ago while indexing on this server');
    expect(words('zh', { ...measured, rateAgeSeconds: 7200 })).toBe('2 小时前在本服务器索引时实测');
  });
});
