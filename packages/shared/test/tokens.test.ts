// Local token counting: exact for ordinary text, and linear on the inputs that
// make the tokenizer quadratic (one long run without whitespace), so that no
// request body can stall a process.
import { beforeAll, describe, expect, it } from 'vitest';
import { countChatPromptTokens, countTextTokens, loadTokenizer } from '../src/tokens.js';

describe('countTextTokens', () => {
  beforeAll(() => loadTokenizer());

  it('counts ordinary text exactly', () => {
    expect(countTextTokens('hello world')).toBe(2);
    expect(countTextTokens('')).toBe(0);
  });

  it('counts a 600,000-character run without whitespace in well under a second, never below the per-slice count', () => {
    const text = '字'.repeat(300_000) + 'abc'.repeat(100_000);
    const started = performance.now();
    const n = countTextTokens(text);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(n).toBeGreaterThan(300_000 / 2);
    // Slicing never merges across a slice, so the count is at least that of the exact count of each part.
    expect(countTextTokens('a'.repeat(2500) + ' b')).toBeGreaterThanOrEqual(countTextTokens('a'.repeat(1000)) * 2);
  });

  it('a chat prompt of such content is counted just as fast', () => {
    const started = performance.now();
    const n = countChatPromptTokens([{ role: 'user', content: 'x'.repeat(500_000) }]);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(n).toBeGreaterThan(1000);
  });
});
