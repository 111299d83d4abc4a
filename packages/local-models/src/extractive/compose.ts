// From scored units to an answer. The best unit anchors it; the answer then
// grows inside the anchor's own paragraph (its neighbours when they also
// answer, the sentence before when the anchor leans on it: "It ...") before
// anything else is added: consecutive sentences of one quote read as an
// answer, a collage of quotes does not. A second passage from elsewhere is
// added only when it scores nearly as well, with as many of the question's
// words, and covers a good part of the question the first does not. A list
// question, or an anchor that introduces a list, is answered with the list's
// items; a table row with its header; a record (a CSV row) whole; a code
// block, or the sentence introducing one, with both (the command or snippet
// is the answer to "How do I install it?").
// Near-duplicates (the same sentence in two overlapping chunks) count once.
// Every sentence ends with its quote's marker; a list, a row or a record
// ends with one.
import type { QuestionShape } from './question.js';
import type { Unit } from './segment.js';
import { hasCjk, termMatch, terms } from './text.js';

// CJK sentences (and their markers) follow each other without a space.
const CJK_END = /[。！？\p{Script=Han}][」』）)]*$/u;

export interface ScoredUnit extends Unit {
  /** False when the unit may join an answer but not anchor it (a count question's sentence without the count). */
  anchorable?: boolean;
  /** Share of the question's weight held, with its paragraph neighbours' help (extractive-answer.ts: scoreLexical). */
  lexical: number;
  /** The same, by the unit alone. */
  ownLexical: number;
  dense: number;
  /** The unit's own score without its quote's rank: what compares two sentences of one quote. */
  content: number;
  score: number;
  marker: string;
}

export interface Passage {
  marker: string;
  units: ScoredUnit[];
}

export interface ComposeOptions {
  /** Most sentences (or rows, records) in an answer; a list is printed whole up to `maxListItems`. */
  maxSentences: number;
  maxListItems: number;
}

// A sentence that starts like this needs the one before it to be understood.
const LEANS_BACK = /^(it|its|this|these|those|they|their|them|he|she|his|her|such|that|then|also|however|but|otherwise|instead)\b/i;

/** The passages of an answer, anchored on `units`' best answerable one. */
export function choosePassages(units: ScoredUnit[], shape: QuestionShape, options: ComposeOptions): Passage[] {
  const ranked = units.filter((u) => u.answerable).sort((a, b) => b.score - a.score || a.quote - b.quote || a.pos - b.pos);
  const anchor = ranked.find((u) => u.anchorable !== false);
  if (!anchor) return [];
  const sameQuote = (u: Unit) => units.filter((x) => x.quote === u.quote);

  // An introduction ("Visitors should bring:") is nothing without its list.
  const introduces = anchor.kind === 'sentence' && anchor.list !== undefined;
  const list = (shape.wantsList || introduces) && bestList(units, anchor, options.maxListItems, shape.wantsList);
  if (list) return list;

  const code = codePassage(units, anchor);
  if (code) return [code];

  if (anchor.kind === 'row' || anchor.kind === 'record') {
    const rows = [anchor];
    if (shape.wantsList) {
      for (const u of ranked) {
        if (rows.length >= options.maxSentences) break;
        if (u.kind === anchor.kind && u.score >= anchor.score * 0.9 && !rows.some((r) => nearDuplicate(r, u))) rows.push(u);
      }
    }
    return passagesOf(rows);
  }

  // The anchor's paragraph first.
  const chosen: ScoredUnit[] = [anchor];
  const inQuote = sameQuote(anchor);
  const at = (pos: number) => inQuote.find((u) => u.pos === pos && u.block === anchor.block && u.answerable && u.kind === 'sentence');
  if (anchor.kind === 'sentence') {
    let lo = anchor.pos;
    let hi = anchor.pos;
    for (;;) {
      if (chosen.length >= options.maxSentences) break;
      const before = at(lo - 1);
      const after = at(hi + 1);
      // The sentence before is needed when the first one chosen leans on it ("It ...").
      const first = chosen.reduce((a, b) => (a.pos < b.pos ? a : b));
      if (before && LEANS_BACK.test(first.text)) {
        chosen.push(before);
        lo--;
      } else if (after && adds(after, chosen, anchor, shape)) {
        chosen.push(after);
        hi++;
      } else if (before && adds(before, chosen, anchor, shape)) {
        chosen.push(before);
        lo--;
      } else break;
    }
  }

  // Another passage only for a good part of the question that the first leaves out.
  const covered = new Set(shape.terms.filter((t) => chosen.some((c) => matches(t, c))));
  const gain = (u: Unit) => shape.terms.reduce((s, t) => s + (!covered.has(t) && matches(t, u) ? (shape.weights.get(t) ?? 0) : 0), 0);
  if (chosen.length < options.maxSentences && covered.size < shape.terms.length) {
    const extra = ranked.find(
      (u) =>
        u.anchorable !== false &&
        u.score >= anchor.score * 0.9 &&
        u.lexical >= anchor.lexical &&
        gain(u) >= 0.25 &&
        !chosen.includes(u) &&
        u.kind !== 'row' &&
        u.kind !== 'record' &&
        u.kind !== 'code' &&
        u.code === undefined &&
        // Items of another list glued to this answer read as one list that does not exist (a collage of steps).
        !(u.kind === 'item' && (shape.wantsList || anchor.kind === 'item')) &&
        !(u.kind === 'sentence' && LEANS_BACK.test(u.text)) &&
        !chosen.some((c) => nearDuplicate(c, u)),
    );
    if (extra) chosen.push(extra);
  }
  return passagesOf(chosen);
}

/**
 * The list that answers: the anchor's own, else the best-scoring one close to
 * the anchor's score; with its introduction, and with its continuation in
 * other quotes (the chunker cuts a long list), never items of another list.
 * For a list question the anchor's list may have one item in its quote.
 */
function bestList(units: ScoredUnit[], anchor: ScoredUnit, maxItems: number, wantsList: boolean): Passage[] | undefined {
  const key = (u: Unit) => `${u.quote}/${u.list}`;
  const lists = new Map<string, ScoredUnit[]>();
  for (const u of units) if (u.list !== undefined && u.answerable) lists.set(key(u), [...(lists.get(key(u)) ?? []), u]);
  const withItems = (members: ScoredUnit[]) => members.filter((m) => m.kind === 'item').length;
  let best: ScoredUnit[] | undefined;
  let bestScore = -1;
  for (const members of lists.values()) {
    if (withItems(members) < 2) continue;
    const score = Math.max(...members.map((m) => m.score));
    if (score > bestScore) {
      best = members;
      bestScore = score;
    }
  }
  const own = anchor.list !== undefined ? lists.get(key(anchor)) : undefined;
  if (own && (own === best || (wantsList && withItems(own) >= 1))) best = own;
  else if (!best || bestScore < anchor.score * 0.85) return undefined;
  const ordered = [...best].sort((a, b) => a.pos - b.pos);
  const intro = ordered.filter((u) => u.kind !== 'item');
  const items = ordered.filter((u) => u.kind === 'item');
  const passages: Passage[] = [{ marker: best[0]!.marker, units: [...intro, ...items] }];
  // Numbered items of the same list (same headings) in other quotes, before and after this quote's: the chunker cuts a long list.
  const sameListIn = (near: ScoredUnit, n: number) =>
    units.find((u) => u.kind === 'item' && u.answerable && u.quote !== near.quote && u.context === near.context && itemNumber(u) === n);
  const runOf = (u: ScoredUnit) =>
    units.filter((x) => x.quote === u.quote && x.list === u.list && x.kind === 'item' && x.answerable).sort((a, b) => a.pos - b.pos);
  let count = items.length;
  for (let first = items[0]!, n = itemNumber(first); n !== undefined && n > 1 && count < maxItems; n = itemNumber(first)) {
    const want = n - 1;
    const prev = sameListIn(first, want);
    if (!prev) break;
    const run = runOf(prev)
      .filter((u) => u.pos <= prev.pos)
      .reverse();
    const before = run.filter((u, i) => itemNumber(u) === want - i).reverse();
    passages.unshift({ marker: prev.marker, units: before });
    count += before.length;
    first = before[0]!;
  }
  for (let last = items.at(-1)!, n = itemNumber(last); n !== undefined && count < maxItems; n = itemNumber(last)) {
    const want = n + 1;
    const next = sameListIn(last, want);
    if (!next) break;
    const after = runOf(next)
      .filter((u) => u.pos >= next.pos)
      .filter((u, i) => itemNumber(u) === want + i);
    passages.push({ marker: next.marker, units: after });
    count += after.length;
    last = after.at(-1)!;
  }
  let room = maxItems;
  return passages.map((p) => ({ ...p, units: p.units.filter((u) => u.kind !== 'item' || room-- > 0) })).filter((p) => p.units.length > 0);
}

/** A code block anchoring the answer, or introduced by the anchor: the introduction, then the block as written. */
function codePassage(units: ScoredUnit[], anchor: ScoredUnit): Passage | undefined {
  if (anchor.code === undefined) return undefined;
  const ofBlock = (kind: Unit['kind']) => units.find((u) => u.quote === anchor.quote && u.kind === kind && u.code === anchor.code && u.answerable);
  const block = anchor.kind === 'code' ? anchor : ofBlock('code');
  if (!block) return undefined;
  const intro = anchor.kind === 'sentence' ? anchor : ofBlock('sentence');
  return { marker: anchor.marker, units: intro ? [intro, block] : [block] };
}

const itemNumber = (u: Unit) => {
  const m = /^\s*(\d{1,3})[.)]\s/.exec(u.text);
  return m ? Number(m[1]) : undefined;
};

function passagesOf(chosen: ScoredUnit[]): Passage[] {
  // In reading order within a quote; quotes in the order of their best unit.
  const byQuote = new Map<number, ScoredUnit[]>();
  for (const u of chosen) byQuote.set(u.quote, [...(byQuote.get(u.quote) ?? []), u]);
  const passages: Passage[] = [];
  for (const group of byQuote.values()) {
    group.sort((a, b) => a.pos - b.pos);
    // Units of one quote that are not consecutive make separate passages, each with its marker.
    let run: ScoredUnit[] = [];
    for (const u of group) {
      const last = run.at(-1);
      if (last && (u.pos !== last.pos + 1 || u.block !== last.block || u.kind !== 'sentence')) {
        passages.push({ marker: last.marker, units: run });
        run = [];
      }
      run.push(u);
    }
    if (run.length) passages.push({ marker: run[0]!.marker, units: run });
  }
  return passages;
}

/**
 * The text of an answer. Each sentence is followed by its quote's marker; a
 * list (with its introduction), a record or a table row is one block, line by
 * line, with the marker after its last line (below a table or a code block,
 * after a blank line, so that the table stays a table and the code is only
 * the code).
 */
export function writeAnswer(passages: Passage[]): string {
  const cite = (text: string, marker: string) => `${text}${CJK_END.test(text) ? '' : ' '}[${marker}]`;
  const parts = passages.map((p) => {
    const [first] = p.units;
    // A line right under a table would be read as one more row (GFM): the marker stands apart.
    if (first!.kind === 'row') return [...(first!.header ?? []), ...p.units.map((u) => u.text)].join('\n') + `\n\n[${p.marker}]`;
    if (p.units.some((u) => u.kind === 'code')) return p.units.map((u) => u.text).join('\n') + `\n\n[${p.marker}]`;
    if (p.units.some((u) => u.kind !== 'sentence')) return cite(p.units.map((u) => u.text).join('\n'), p.marker);
    return p.units.map((u) => cite(u.text, p.marker)).reduce((a, b) => a + (/[。！？]\[[^\]]+\]$/.test(a) && hasCjk(b[0]!) ? '' : ' ') + b);
  });
  const multiline = parts.some((p) => p.includes('\n'));
  return parts.join(multiline ? '\n\n' : ' ');
}

function matches(term: string, u: Unit): boolean {
  return termMatch(term, stemsOf(u), u.text) > 0;
}

/**
 * A neighbour joins the anchor when it is about the question in its own words
 * (or its meaning is close), and answers nearly as well or answers a part of
 * the question the chosen ones do not. (Its headings' words do not count:
 * every sentence under a heading has those.)
 */
function adds(u: ScoredUnit, chosen: ScoredUnit[], anchor: ScoredUnit, shape: QuestionShape): boolean {
  if (chosen.some((c) => nearDuplicate(c, u))) return false;
  const own = shape.terms.filter((t) => matches(t, u));
  if (own.length === 0 && u.dense < 0.6) return false;
  if (u.content >= anchor.content * 0.6) return true;
  return u.content >= anchor.content * 0.45 && own.some((t) => !chosen.some((c) => matches(t, c)));
}

const stemCache = new WeakMap<Unit, Set<string>>();
export function stemsOf(u: Unit): Set<string> {
  let s = stemCache.get(u);
  if (!s) stemCache.set(u, (s = new Set(terms(u.text))));
  return s;
}

/** The same sentence twice (overlapping chunks), one inside the other, or nearly the same words. */
export function nearDuplicate(a: Unit, b: Unit): boolean {
  const x = a.text.replace(/\s+/g, ' ').toLowerCase();
  const y = b.text.replace(/\s+/g, ' ').toLowerCase();
  if (x.includes(y) || y.includes(x)) return true;
  const sa = stemsOf(a);
  const sb = stemsOf(b);
  if (sa.size === 0 || sb.size === 0) return false;
  let common = 0;
  for (const t of sa) if (sb.has(t)) common++;
  return common / (sa.size + sb.size - common) >= 0.8;
}
