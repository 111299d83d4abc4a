import { describe, expect, it } from 'vitest';
import { DEFAULT_QA_PROMPT, buildQaPrompt, parseQaPairs } from '../src/ingest/index.js';

describe('QA prompt', () => {
  it('wraps the text and always appends the parseable format, also with custom instructions', () => {
    const p = buildQaPrompt('Tea is a drink.');
    expect(p.startsWith(DEFAULT_QA_PROMPT)).toBe(true);
    expect(p).toContain('Q1: question one\nA1: answer one');
    expect(p.endsWith('<Context>\nTea is a drink.\n</Context>')).toBe(true);
    const custom = buildQaPrompt('x', 'Only ask about prices.');
    expect(custom.startsWith('Only ask about prices.')).toBe(true);
    expect(custom).not.toContain(DEFAULT_QA_PROMPT);
    expect(custom).toContain('Q1: question one');
  });
});

describe('parseQaPairs', () => {
  it('parses the requested format with multi-line answers', () => {
    const out = 'Here are the pairs:\nQ1: What is tea?\nA1: A drink.\nMade from leaves.\n\nQ2: Is it hot?\nA2: Usually.';
    expect(parseQaPairs(out)).toEqual([
      { q: 'What is tea?', a: 'A drink.\nMade from leaves.' },
      { q: 'Is it hot?', a: 'Usually.' },
    ]);
  });

  it('is lenient about emphasis, bullets, full-width colons and words', () => {
    const out = [
      '**Q1:** Where?',
      '**A1:** Here.',
      '- Q2: When?',
      '- A2: Now.',
      'Question 3: Who?',
      'Answer 3: Me.',
      '问题4：为什么？',
      '答案4：因为。',
      'Q: Unnumbered?',
      'A: Fine.',
    ].join('\n');
    expect(parseQaPairs(out)).toEqual([
      { q: 'Where?', a: 'Here.' },
      { q: 'When?', a: 'Now.' },
      { q: 'Who?', a: 'Me.' },
      { q: '为什么？', a: '因为。' },
      { q: 'Unnumbered?', a: 'Fine.' },
    ]);
  });

  it('drops a pair cut off before its answer and ignores text that only looks like a marker', () => {
    const out = 'Q1: Which option?\nA1: A: the first one.\nQuality: high\nQ2: Cut off?';
    expect(parseQaPairs(out)).toEqual([{ q: 'Which option?', a: 'A: the first one.\nQuality: high' }]);
    expect(parseQaPairs('no pairs at all')).toEqual([]);
  });
});
