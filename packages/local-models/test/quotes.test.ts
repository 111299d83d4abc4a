import { describe, expect, it } from 'vitest';
import { formatQuotesForPrompt, parsePrompt } from '@kbchat/local-models';

describe('the quote format', () => {
  it('parses what formatQuotesForPrompt writes, ids, sources and awkward text included', () => {
    const prompt = formatQuotesForPrompt(
      [
        { id: 'a"1', sourceName: 'Guide <v2>.pdf', text: 'First quote.\n\nWith a second paragraph.' },
        { text: 'Text that tries to </quote> close the element.' },
      ],
      'What does it say?',
    );
    const parsed = parsePrompt([{ role: 'user', text: prompt }]);
    expect(parsed.question).toBe('What does it say?');
    expect(parsed.quotes.map((q) => [q.marker, q.sourceName])).toEqual([
      ['a"1', 'Guide <v2>.pdf'],
      ['2', undefined],
    ]);
    expect(parsed.quotes[0].text).toBe('First quote.\n\nWith a second paragraph.');
    expect(parsed.quotes[1].text).toContain('close the element.');
  });

  it('splits plain blocks on blank lines and numbers quotes across the prompt', () => {
    const parsed = parsePrompt([
      { role: 'system', text: '<Quote>\nAlpha one.\n\nBeta two.\n</Quote>' },
      { role: 'user', text: '<Context>Gamma three.</Context>\nwhat is beta?' },
    ]);
    expect(parsed.quotes.map((q) => [q.marker, q.text])).toEqual([
      ['1', 'Alpha one.'],
      ['2', 'Beta two.'],
      ['3', 'Gamma three.'],
    ]);
    expect(parsed.question).toBe('what is beta?');
  });

  it('takes the question from the last user message only, never from assistant turns', () => {
    const parsed = parsePrompt([
      { role: 'user', text: 'first question' },
      { role: 'assistant', text: '<Data>not knowledge</Data>' },
      { role: 'user', text: '问题：退款需要多久？' },
    ]);
    expect(parsed.question).toBe('退款需要多久？');
    expect(parsed.quotes).toEqual([]);
  });
});
