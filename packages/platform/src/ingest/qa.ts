// QA mode: an LLM turns each chunk into question/answer pairs (FastGPT's
// "qa" training type). These are the pure halves: the prompt and a lenient
// parser of the model's answer. The call itself happens in the indexing worker.
//
// As in FastGPT, a custom `qaPrompt` replaces only the instructions; the
// output format and the text are always appended, so answers stay parseable.

export const DEFAULT_QA_PROMPT = `The text inside <Context></Context> is a passage. Study and analyse it, then write down what it teaches:
- Ask questions about it and give the answer to each question.
- Answers must be detailed and complete; keep the passage's own wording where possible.
- Answers may contain markdown: plain text, links, code, tables, formulas.
- Ask at most 30 questions.
- Write in the language of the passage.`;

const QA_FORMAT = `Answer in exactly this format, nothing before or after it:
Q1: question one
A1: answer one
Q2: question two
A2: answer two
…`;

export interface QaPair {
  q: string;
  a: string;
}

/** The full prompt for one chunk. `qaPrompt`: custom instructions (default DEFAULT_QA_PROMPT). */
export function buildQaPrompt(text: string, qaPrompt?: string): string {
  const instructions = qaPrompt?.trim() || DEFAULT_QA_PROMPT;
  return `${instructions}\n\n${QA_FORMAT}\n\n<Context>\n${text}\n</Context>`;
}

// "Q1:", "**Q1**:", "- Q 2：", "Question 3:", "问题1：" / and the same for answers.
const MARK = (words: string) =>
  new RegExp(`^\\s*(?:[-*>]\\s*)?(?:\\*\\*|__)?\\s*(?:${words})\\s*\\d*\\s*(?:\\*\\*|__)?\\s*[:：](?:\\s*(?:\\*\\*|__)(?=\\s|$))?\\s?(.*)$`, 'i');
const QUESTION = MARK('q|question|问题|问');
const ANSWER = MARK('a|answer|答案|答');

/**
 * Parses model output into pairs. Lenient about numbering, markdown emphasis,
 * full-width colons and multi-line answers; pairs with no question or no
 * answer (a reply cut off mid-pair) are dropped.
 */
export function parseQaPairs(output: string): QaPair[] {
  const pairs: QaPair[] = [];
  let current: { q: string[]; a: string[] | undefined } | undefined;
  const finish = () => {
    if (!current || !current.a) return;
    const q = current.q.join('\n').trim();
    const a = current.a.join('\n').trim();
    if (q && a) pairs.push({ q, a });
  };
  for (const line of output.replace(/\r\n?/g, '\n').split('\n')) {
    const q = QUESTION.exec(line);
    if (q) {
      finish();
      current = { q: [q[1]], a: undefined };
      continue;
    }
    const a = current && !current.a ? ANSWER.exec(line) : null;
    if (a && current) {
      current.a = [a[1]];
      continue;
    }
    if (!current) continue; // preamble before the first question
    (current.a ?? current.q).push(line);
  }
  finish();
  return pairs;
}
