// Remembered token counts for the search's budget: the same as counting, and
// counted again when an item's text changes.
import { countTextTokens, loadTokenizer } from '@kbchat/shared';
import { beforeAll, expect, it } from 'vitest';
import { dataTokens } from '../src/retrieval/token-counts.js';

beforeAll(() => loadTokenizer());

it('gives countTextTokens of q plus a, and recounts an edited item', () => {
  const q = 'What lowers the risk of a heart attack?';
  const a = 'Daily low-dose aspirin lowers cardiovascular events in adults.';
  const exact = countTextTokens(q) + countTextTokens(a);
  expect(dataTokens('t1', q, a)).toBe(exact);
  expect(dataTokens('t1', q, a)).toBe(exact); // remembered
  const edited = `${a} It also raises the risk of bleeding, which outweighs the benefit for most people without heart disease.`;
  expect(dataTokens('t1', q, edited)).toBe(countTextTokens(q) + countTextTokens(edited));
  // Moving text between q and a is an edit too.
  expect(dataTokens('t2', 'ab', 'c')).toBe(countTextTokens('ab') + countTextTokens('c'));
  expect(dataTokens('t2', 'a', 'bc')).toBe(countTextTokens('a') + countTextTokens('bc'));
});
