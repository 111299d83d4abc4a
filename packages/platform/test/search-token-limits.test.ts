// Cutting text to a model's limit: within the limit in o200k tokens, a prefix
// of the text, whole code points, and no slower for 20 MB than for a page.
import { countTextTokens, loadTokenizer } from '@kbchat/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { cutToTokens, fitStepInput, tokensWithin } from '../src/search/token-limits.js';

beforeAll(() => loadTokenizer());

describe('cutToTokens', () => {
  const texts = {
    english: 'The Aletsch glacier is the largest glacier in the Alps. '.repeat(400),
    cjk: '阿莱奇冰川是阿尔卑斯山最大的冰川，位于瑞士瓦莱州。'.repeat(400),
    emoji: '🏔️❄️🧊'.repeat(2000),
    oneRun: 'a'.repeat(200_000),
  };
  for (const [name, text] of Object.entries(texts)) {
    it(`keeps ${name} text within the limit, as a prefix of whole code points`, () => {
      const { text: cut, cut: wasCut } = cutToTokens(text, 256);
      expect(wasCut).toBe(true);
      expect(countTextTokens(cut)).toBeLessThanOrEqual(256);
      expect(countTextTokens(cut)).toBeGreaterThan(150);
      expect(text.startsWith(cut)).toBe(true);
      expect(/[\uD800-\uDBFF]$/.test(cut)).toBe(false);
    });
  }

  it('leaves text that fits alone, and says so', () => {
    expect(cutToTokens('Where is the Aletsch glacier?', 256)).toEqual({ text: 'Where is the Aletsch glacier?', cut: false });
    expect(tokensWithin('Where is the Aletsch glacier?', 256)).toBe(countTextTokens('Where is the Aletsch glacier?'));
    expect(tokensWithin(texts.english, 256)).toBeUndefined();
  });

  it('reads only a window of a 20 MB text', () => {
    const huge = 'glacier ice flows slowly down the valley '.repeat(500_000);
    const started = performance.now();
    expect(countTextTokens(cutToTokens(huge, 8000).text)).toBeLessThanOrEqual(8000);
    expect(tokensWithin(huge, 8000)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('fitStepInput', () => {
  it('gives the question half the context and the newest whole history turns a quarter', () => {
    const turn = (i: number) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} `.repeat(100) });
    const history = Array.from({ length: 20 }, (_, i) => turn(i));
    const fitted = fitStepInput('why '.repeat(5000), history, 2000);
    expect(countTextTokens(fitted.question)).toBeLessThanOrEqual(1000);
    const historyTokens = fitted.history.reduce((n, t) => n + countTextTokens(t.content), 0);
    expect(historyTokens).toBeLessThanOrEqual(500);
    expect(fitted.history).toEqual(history.slice(history.length - fitted.history.length));
    expect(fitted.inputCut).toEqual({
      questionChars: 20_000,
      sentChars: fitted.question.length,
      historyTurns: 20,
      sentHistoryTurns: fitted.history.length,
      maxContext: 2000,
    });
    expect(fitStepInput('short', history.slice(0, 1), 16_000)).toEqual({ question: 'short', history: history.slice(0, 1) });
  });
});
