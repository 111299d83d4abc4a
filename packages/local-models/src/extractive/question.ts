// What a question asks for, as far as choosing sentences needs it: its
// terms; whether it wants a count ("how many": only a sentence with a
// number can answer it), a quantity or a time (a sentence with a number is
// likelier to answer it); whether it is a yes/no question (then the thing
// it asks about must be in the knowledge at all); and whether it wants a
// list or steps (the answer is then the list found, whole); and the names
// it gives (an answer must come from a quote that names them).
import { termMatch, terms } from './text.js';

export interface QuestionShape {
  terms: string[];
  /** Each term's share of the question's weight (idf over the knowledge), set when the knowledge is scored. */
  weights: Map<string, number>;
  /** Terms found nowhere in the knowledge. */
  absent: Set<string>;
  wantsCount: boolean;
  /** What "how many" counts ("beds" in "How many beds ..."), as a term. */
  counted?: string;
  wantsQuantity: boolean;
  wantsTime: boolean;
  yesNo: boolean;
  wantsList: boolean;
  /** The question's words as written (lower case) for each term: a unit with the same form matches better than an inflection. */
  surface: Map<string, Set<string>>;
  /** Pairs of terms next to each other in the question ("worker thread"): a unit that has them next to each other says the same thing. */
  pairs: [string, string][];
  /** Terms of the names the question gives: capitalised words after its first ("Fastify", "Zorblax", "iPhone"). */
  names: string[];
}

const COUNT = /\bhow\s+many\b|多少个|几个|几[个天年次位]|何個|몇/i;
const QUANTITY =
  /\b(how\s+(much|long|far|old|big|large|heavy|often|soon|wide|tall|high|deep|fast)|(what|which)\s+(percentage|price|size|amount|number|port|version)|largest|biggest|smallest|maximum|minimum|longest|shortest|at\s+most|at\s+least|limit)\b|多少|多久|多长|多大|多远|いくら|얼마/i;
const TIME = /\b(when|what\s+time|(what|which)\s+(year|date|day|month|hour))\b|什么时候|何时|哪年|哪天|几点|いつ|何時|언제/i;
const YES_NO =
  /^\s*(does|do|did|is|are|was|were|can|could|will|would|has|have|had|should|shall|may|might|must)\b|[吗嗎][？?]?\s*$|是否|能否|有没有|可不可以|ですか[？?]?\s*$|까[？?]?\s*$/i;
const LIST =
  /\b(list|enumerate|steps?|stages?|procedure|checklist|requirements|tasks|what\s+(should|must|do|can)\s+(i|we|you|one|visitors?|users?|employees?)\b(?!\s+(be|have)\b)|which\s+\w+\s+(are|must|should)\s+(i|we|you))\b|步骤|哪些|列出|清单|流程|手順|一覧|단계|목록/i;

export function questionShape(question: string): QuestionShape {
  const surface = new Map<string, Set<string>>();
  for (const word of question.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}-]*/gu) ?? []) {
    for (const t of terms(word)) surface.set(t, new Set([...(surface.get(t) ?? []), word]));
  }
  const ordered = terms(question);
  const pairs = ordered
    .slice(1)
    .map((t, i): [string, string] => [ordered[i]!, t])
    .filter(([a, b]) => a !== b);
  const words = question.match(/[\p{L}\p{N}][\p{L}\p{N}.+#'’-]*/gu) ?? [];
  const names = words
    .slice(1)
    .filter((w) => /^\p{Lu}|\p{Ll}\p{Lu}/u.test(w))
    .flatMap((w) => terms(w));
  return {
    surface,
    pairs,
    names: [...new Set(names)],
    terms: [...new Set(terms(question))],
    weights: new Map(),
    absent: new Set(),
    wantsCount: COUNT.test(question),
    counted: terms(/\bhow\s+many\s+([\p{L}][\p{L}-]*)/iu.exec(question)?.[1] ?? '')[0],
    wantsQuantity: COUNT.test(question) || QUANTITY.test(question),
    wantsTime: TIME.test(question),
    yesNo: YES_NO.test(question),
    wantsList: LIST.test(question),
  };
}

const CARDINAL =
  /\d|[一二三四五六七八九十百千万两]|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|dozen)\b/i;
const AMOUNT = /\b(half|twice|once|double|free|midnight|noon)\b/i;

/**
 * Whether a text holds a count, and of `counted` when given: a number with
 * the counted word at most three words after it ("22 beds", "six aluminium
 * boats", "128 of its tokens") or right before it ("Beds: 22").
 */
export function hasCount(text: string, counted?: string): boolean {
  if (!counted) return CARDINAL.test(text);
  const words = text.match(/[\p{L}\p{N}]+/gu) ?? [];
  const isCounted = (w: string | undefined) => w !== undefined && termMatch(counted, new Set(terms(w)), w) > 0;
  return words.some((w, i) => CARDINAL.test(w) && !/^\p{L}$/u.test(w) && (isCounted(words[i - 1]) || words.slice(i + 1, i + 4).some(isCounted)));
}

const TIME_WORDS =
  /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|morning|afternoon|evening|night|daily|weekly|monthly|yearly|annually|week|month|year|today|tomorrow|spring|summer|autumn|winter)\b|[点时天周月年]/i;

/**
 * Whether a text has what the question asks for, when it asks for a
 * quantity (a number) or a time (a number or a time word); undefined when
 * it asks for neither.
 */
export function hasAnswerType(shape: QuestionShape, text: string): boolean | undefined {
  if (shape.wantsQuantity) return CARDINAL.test(text) || AMOUNT.test(text);
  if (shape.wantsTime) return CARDINAL.test(text) || AMOUNT.test(text) || TIME_WORDS.test(text);
  return undefined;
}
