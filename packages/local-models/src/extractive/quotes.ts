// The quote format local-extractive reads, and the helper that writes it.
//
// Written by formatQuotesForPrompt (the format this model parses best):
//
//   Answer the question using only the quotes in the Reference block ... [instructions]
//   <Reference>
//   <quote id="1" source="handbook.pdf">
//   text of the first quote
//   </quote>
//   ...
//   </Reference>
//   Question: the question
//
// Also read, leniently: containers <Reference>, <Data> (FastGPT), <Quotes>,
// <Context>, <Knowledge>, <Documents> in system or user messages; inside a
// container, <quote ...> elements, <QA><Q>…</Q><A>…</A></QA> pairs, lines that
// start with a marker like "[1] text" or "[doc-2] text", or else paragraphs
// separated by blank lines (numbered 1, 2, ... across the whole prompt).
// Outside containers, standalone <quote ...>/<Quote> and <QA> elements count too.

export interface QuoteInput {
  id?: string;
  sourceName?: string;
  text: string;
}

export interface ParsedQuote {
  /** What the answer cites, shown as [marker]. */
  marker: string;
  sourceName?: string;
  text: string;
  /** For a QA pair, the stored question; its answer is `text`. */
  question?: string;
}

export interface ParsedPrompt {
  question: string;
  quotes: ParsedQuote[];
}

const CONTAINER = /<(reference|data|quotes|context|knowledge|documents)(\s[^>]*)?>([\s\S]*?)<\/\1\s*>/gi;
const QUOTE_ELEMENT = /<quote(\s[^>]*)?>([\s\S]*?)<\/quote\s*>/gi;
const QA_ELEMENT = /<qa(\s[^>]*)?>([\s\S]*?)<\/qa\s*>/gi;
const MARKER_LINE = /^\s*\[([^\]\s]{1,40})\]\s+/;
const QUESTION_LABEL = /(?:^|\n)\s*(?:question|user question|query|q|问题|問題)\s*[:：]/gi;

const INSTRUCTIONS =
  'Answer the question using only the quotes in the Reference block below. Cite every quote you use by its id in square brackets, ' +
  'like [1]. If the quotes do not contain the answer, say that you could not find it in the provided knowledge.';

/** Writes quotes and a question in the format local-extractive reads best (any chat model can use it too). */
export function formatQuotesForPrompt(quotes: QuoteInput[], question: string): string {
  const lines = [INSTRUCTIONS, '<Reference>'];
  quotes.forEach((q, i) => {
    const source = q.sourceName ? ` source="${escapeAttribute(q.sourceName)}"` : '';
    lines.push(`<quote id="${escapeAttribute(q.id ?? String(i + 1))}"${source}>`);
    // A quote's text must not be able to close the element or the container.
    lines.push(q.text.trim().replace(/<\/(quote|reference)/gi, '< /$1'));
    lines.push('</quote>');
  });
  lines.push('</Reference>', `Question: ${question.trim()}`);
  return lines.join('\n');
}

/** Finds the quotes (system and user messages) and the question (last user message). */
export function parsePrompt(messages: { role: string; text: string }[]): ParsedPrompt {
  const quotes: ParsedQuote[] = [];
  const counter = { next: 1 };
  let lastUser = '';
  for (const m of messages) {
    if (m.role !== 'system' && m.role !== 'developer' && m.role !== 'user') continue;
    const rest = extractQuotes(m.text, quotes, counter);
    if (m.role === 'user') lastUser = rest;
  }
  return { question: findQuestion(lastUser), quotes };
}

/** Moves every quote in text into `quotes`; returns the text without them. */
function extractQuotes(text: string, quotes: ParsedQuote[], counter: { next: number }): string {
  const outside = text.replace(CONTAINER, (_all, _name: string, _attrs: string, body: string) => {
    parseContainer(body, quotes, counter);
    return '\n';
  });
  return outside
    .replace(QA_ELEMENT, (_all, attrs: string | undefined, body: string) => {
      pushQa(attrs, body, quotes, counter);
      return '\n';
    })
    .replace(QUOTE_ELEMENT, (_all, attrs: string | undefined, body: string) => {
      pushQuote(attrs, body, quotes, counter);
      return '\n';
    });
}

function parseContainer(body: string, quotes: ParsedQuote[], counter: { next: number }): void {
  let structured = false;
  const rest = body
    .replace(QA_ELEMENT, (_all, attrs: string | undefined, inner: string) => {
      structured = true;
      pushQa(attrs, inner, quotes, counter);
      return '\n\n';
    })
    .replace(QUOTE_ELEMENT, (_all, attrs: string | undefined, inner: string) => {
      structured = true;
      pushQuote(attrs, inner, quotes, counter);
      return '\n\n';
    });
  // Text left between structured quotes is usually separators; without any, the plain forms apply.
  if (structured && rest.trim().length < 20) return;
  const lines = rest.split('\n');
  if (lines.some((l) => MARKER_LINE.test(l))) {
    let current: ParsedQuote | undefined;
    for (const line of lines) {
      const m = MARKER_LINE.exec(line);
      if (m) {
        current = { marker: m[1], text: line.slice(m[0].length) };
        quotes.push(current);
      } else if (current) current.text = `${current.text}\n${line}`.trim();
    }
    return;
  }
  for (const paragraph of rest.split(/\n\s*\n/)) {
    if (paragraph.trim()) quotes.push({ marker: String(counter.next++), text: paragraph.trim() });
  }
}

function pushQuote(attrs: string | undefined, body: string, quotes: ParsedQuote[], counter: { next: number }): void {
  const text = body.trim();
  if (!text) return;
  const a = parseAttributes(attrs);
  // A bare <Quote> holding several paragraphs or [n] lines is a container (FastGPT style).
  if (!attrs?.trim() && (/\n\s*\n/.test(text) || text.split('\n').some((l) => MARKER_LINE.test(l)))) {
    parseContainer(text, quotes, counter);
    return;
  }
  quotes.push({ marker: a.id ?? String(counter.next++), sourceName: a.source ?? a.sourcename, text });
}

function pushQa(attrs: string | undefined, body: string, quotes: ParsedQuote[], counter: { next: number }): void {
  const q = /<q>([\s\S]*?)<\/q>/i.exec(body)?.[1]?.trim();
  const a = /<a>([\s\S]*?)<\/a>/i.exec(body)?.[1]?.trim();
  const text = a ?? body.replace(/<\/?(q|a)>/gi, ' ').trim();
  if (!text) return;
  quotes.push({ marker: parseAttributes(attrs).id ?? String(counter.next++), text, question: q });
}

function findQuestion(text: string): string {
  let cut = -1;
  for (const m of text.matchAll(QUESTION_LABEL)) cut = m.index + m[0].length;
  const question = cut >= 0 ? text.slice(cut) : text;
  return question
    .replace(/^\s*("""|'''|["“「])/, '')
    .replace(/("""|'''|["”」])\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function parseAttributes(attrs: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!attrs) return out;
  for (const m of attrs.matchAll(/([\w-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/g)) {
    out[m[1].toLowerCase().replace(/[-_]/g, '')] = unescapeAttribute(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\s+/g, ' ');
}

function unescapeAttribute(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
