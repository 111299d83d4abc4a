// What a check expects and how one search answer is judged against it. No
// store, no HTTP: a search outcome in, a result out.
//
// An expectation names what a found chunk must be: a text it contains, a
// collection it belongs to, a data item it is, or several of these at once
// (all must hold for the same chunk). A re-chunk gives every chunk a new data
// id, and a re-import a new collection id, so the text is the expectation that
// survives them; the web app saves a text (and only a text) for each result
// a user ticks. Ids are there for callers that pin one exact chunk.
import type { Expectation, CheckSettings, ExpectationResult, TopResult, CheckResult } from '@kbchat/contracts';
import type { DroppedItem, SearchResultItem } from '../retrieval/index.js';

export type { Expectation, CheckSettings, ExpectationResult, TopResult, CheckResult };

export const TOP_KEPT = 5;

const normalise = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();

export function matches(e: Expectation, item: Pick<SearchResultItem, 'id' | 'collectionId' | 'q' | 'a'>): boolean {
  if (e.dataId && e.dataId !== item.id) return false;
  if (e.collectionId && e.collectionId !== item.collectionId) return false;
  if (e.text && !normalise(`${item.q}\n${item.a}`).includes(normalise(e.text))) return false;
  return true;
}

const SCORE_ORDER = ['reRank', 'rrf', 'embedding', 'fullText'];

function rankingScore(item: SearchResultItem): { value: number; type: string } {
  for (const type of SCORE_ORDER) {
    const s = item.score.find((x) => x.type === type);
    if (s) return { value: s.value, type };
  }
  return { value: 0, type: 'none' };
}

export function judge(
  check: { id: string; question: string; expected: Expectation[] },
  outcome: { list: SearchResultItem[]; dropped?: DroppedItem[]; found?: number },
): CheckResult {
  const expectations = check.expected.map((e): ExpectationResult => {
    const at = outcome.list.findIndex((item) => matches(e, item));
    if (at >= 0) return { rank: at + 1, dataId: outcome.list[at]!.id };
    // Dropped q/a are cut to 300 characters: a text past that is reported as not found rather than dropped.
    const droppedAt = (outcome.dropped ?? []).findIndex((item) => matches(e, item));
    if (droppedAt < 0) return { rank: null };
    const d = outcome.dropped![droppedAt]!;
    return { rank: null, dataId: d.id, dropped: { reason: d.reason, rank: outcome.list.length + droppedAt + 1 } };
  });
  return {
    checkId: check.id,
    question: check.question,
    passed: expectations.every((e) => e.rank !== null),
    expectations,
    expected: check.expected,
    top: outcome.list.slice(0, TOP_KEPT).map((item) => {
      const s = rankingScore(item);
      return { dataId: item.id, collectionId: item.collectionId, sourceName: item.sourceName, score: s.value, scoreType: s.type };
    }),
    found: outcome.found ?? outcome.list.length,
  };
}

export function failed(check: { id: string; question: string; expected: Expectation[] }, message: string): CheckResult {
  return {
    checkId: check.id,
    question: check.question,
    passed: false,
    error: message,
    expectations: check.expected.map(() => ({ rank: null })),
    expected: check.expected,
    top: [],
    found: 0,
  };
}
