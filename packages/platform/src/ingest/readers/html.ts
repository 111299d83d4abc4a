// HTML -> markdown that keeps what chunking and retrieval need: headings (the
// chunker's title path), lists, tables as markdown tables, code as fenced blocks.
// Everything that is not content (scripts, styles, navigation, forms' chrome) goes.
// Links keep only their text and images are dropped: URLs cost embedding tokens
// (the local model reads only 128) and match no question.

import { parseDocument } from 'htmlparser2';
import { isTag, isText, type AnyNode, type Element } from 'domhandler';

const DROP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'nav',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'head',
  'title',
  'button',
  'select',
  'input',
  'textarea',
  'img',
  'picture',
  'video',
  'audio',
  'map',
  'dialog',
]);
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'figure',
  'figcaption',
  'address',
  'details',
  'summary',
  'dl',
  'dt',
  'dd',
  'form',
  'fieldset',
  'body',
  'html',
  'center',
  'hr',
]);
const BR = '\u0000'; // marks a <br> through whitespace collapsing

export interface HtmlToMarkdownResult {
  text: string;
  /** The document's <title>, if any. */
  title?: string;
}

class Writer {
  readonly blocks: string[] = [];
  inline = '';

  flush(): void {
    const text = this.inline
      .replace(/[ \t\n\r\f\u00a0]+/g, ' ')
      .split(BR)
      .map((line) => line.trim())
      .join('\n')
      .replace(/\n{2,}/g, '\n')
      .trim();
    if (text) this.blocks.push(text);
    this.inline = '';
  }

  block(text: string): void {
    this.flush();
    if (text.trim()) this.blocks.push(text);
  }

  finish(): string {
    this.flush();
    return this.blocks.join('\n\n');
  }
}

function textContent(node: AnyNode): string {
  if (isText(node)) return node.data;
  if (isTag(node)) {
    if (node.name === 'br') return '\n';
    return node.children.map(textContent).join('');
  }
  return '';
}

function fence(code: string, lang: string): string {
  // A fence longer than any backtick run inside, so the code cannot close it early.
  const longest = (code.match(/`+/g) ?? []).reduce((max, run) => Math.max(max, run.length), 0); // no spread: there may be 100,000s
  const marker = '`'.repeat(Math.max(3, longest + 1));
  return `${marker}${lang}\n${code.replace(/^\n+|\s+$/g, '')}\n${marker}`;
}

function codeLanguage(el: Element): string {
  const code = el.children.find((c): c is Element => isTag(c) && c.name === 'code');
  const cls = `${el.attribs.class ?? ''} ${code?.attribs.class ?? ''}`;
  return /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(cls)?.[1] ?? '';
}

/** Renders nodes as a standalone fragment (list items, cells, quotes). */
function renderFragment(nodes: AnyNode[]): string {
  const w = new Writer();
  for (const n of nodes) walk(n, w);
  return w.finish();
}

function renderList(list: Element): string {
  const ordered = list.name === 'ol';
  let n = Number(list.attribs.start ?? '1');
  if (!Number.isFinite(n)) n = 1;
  const lines: string[] = [];
  for (const item of list.children) {
    if (!isTag(item)) continue;
    if (item.name === 'ul' || item.name === 'ol') {
      lines.push(indent(renderList(item), '  '));
      continue;
    }
    const marker = ordered ? `${n++}. ` : '- ';
    const body = renderFragment(item.children).replace(/\n{2,}/g, '\n') || '';
    if (!body) continue;
    lines.push(marker + indent(body, ' '.repeat(marker.length)).slice(marker.length));
  }
  return lines.join('\n');
}

function indent(text: string, pad: string): string {
  return text
    .split('\n')
    .map((l) => (l ? pad + l : l))
    .join('\n');
}

function cellText(cell: Element): string {
  return renderFragment(cell.children)
    .replace(/\s*\n+\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}

function tableRows(table: Element): Element[][] {
  const rows: Element[][] = [];
  const visit = (el: Element): void => {
    for (const child of el.children) {
      if (!isTag(child)) continue;
      if (child.name === 'tr') rows.push(child.children.filter((c): c is Element => isTag(c) && (c.name === 'td' || c.name === 'th')));
      else if (child.name === 'thead' || child.name === 'tbody' || child.name === 'tfoot') visit(child);
    }
  };
  visit(table);
  return rows.filter((r) => r.length > 0);
}

function renderTable(table: Element): string {
  const rows = tableRows(table).map((cells) => {
    const out: string[] = [];
    for (const cell of cells) {
      out.push(cellText(cell));
      const span = Math.min(Number(cell.attribs.colspan ?? '1') || 1, 50);
      for (let i = 1; i < span; i++) out.push(''); // keep columns aligned under the header
    }
    return out;
  });
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((r) => r.length));
  const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
  const caption = table.children.find((c): c is Element => isTag(c) && c.name === 'caption');
  const out = [line(rows[0]), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)];
  return (caption ? `${renderFragment(caption.children)}\n\n` : '') + out.join('\n');
}

function inlineWrap(el: Element, w: Writer, mark: string): void {
  const inner = renderFragment(el.children);
  if (!inner) return;
  if (inner.includes('\n\n')) {
    w.block(inner); // block content inside an inline element: keep it as blocks
    return;
  }
  w.inline += ` ${mark}${inner.replace(/\n/g, BR)}${mark} `;
}

function walk(node: AnyNode, w: Writer): void {
  if (isText(node)) {
    w.inline += node.data;
    return;
  }
  if (!isTag(node)) return; // comments, directives, CDATA
  const name = node.name;
  if (DROP.has(name)) return;
  if (node.attribs.hidden !== undefined || node.attribs['aria-hidden'] === 'true') return;
  const heading = /^h([1-6])$/.exec(name);
  if (heading) {
    const text = renderFragment(node.children).replace(/\s+/g, ' ').trim();
    if (text) w.block(`${'#'.repeat(Number(heading[1]))} ${text}`);
    return;
  }
  switch (name) {
    case 'br':
      w.inline += BR;
      return;
    case 'pre':
      w.block(fence(textContent(node), codeLanguage(node)));
      return;
    case 'code': {
      const code = textContent(node).replace(/\s+/g, ' ').trim();
      if (code) w.inline += code.includes('`') ? `\`\` ${code} \`\`` : `\`${code}\``;
      return;
    }
    case 'ul':
    case 'ol':
      w.block(renderList(node));
      return;
    case 'table':
      w.block(renderTable(node));
      return;
    case 'blockquote':
      w.block(
        renderFragment(node.children)
          .split('\n')
          .map((l) => (l ? `> ${l}` : '>'))
          .join('\n'),
      );
      return;
    case 'strong':
    case 'b':
      inlineWrap(node, w, '**');
      return;
    case 'em':
    case 'i':
      inlineWrap(node, w, '*');
      return;
    case 'li': // a stray <li> outside a list
      w.block(`- ${renderFragment(node.children)}`);
      return;
  }
  const isBlock = BLOCK.has(name);
  if (isBlock) w.flush();
  for (const child of node.children) walk(child, w);
  if (isBlock) w.flush();
}

/** Depth-first search without recursion (trees can be deep: see MAX_HTML_DEPTH). */
function findElement(nodes: AnyNode[], match: (el: Element) => boolean, skip?: (el: Element) => boolean): Element | undefined {
  const stack = [...nodes].reverse();
  while (stack.length) {
    const n = stack.pop()!;
    if (!isTag(n)) continue;
    if (match(n)) return n;
    if (!skip?.(n)) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return undefined;
}

function treeDepth(nodes: AnyNode[]): number {
  let max = 0;
  const stack: [AnyNode, number][] = nodes.map((n) => [n, 1]);
  while (stack.length) {
    const [n, d] = stack.pop()!;
    if (!isTag(n)) continue;
    if (d > max) max = d;
    for (const c of n.children) stack.push([c, d + 1]);
  }
  return max;
}

// Elements that never nest content or whose end tag may be left out: they do not count toward depth.
const NO_DEPTH = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
  'p',
  'li',
  'dt',
  'dd',
  'tr',
  'td',
  'th',
  'option',
  'optgroup',
  'thead',
  'tbody',
  'tfoot',
  'colgroup',
  'caption',
  'rb',
  'rt',
  'rp',
  'html',
  'head',
  'body',
]);
/** Deepest element nesting converted; deeper trees are refused (the converter recurses per level). */
export const MAX_HTML_DEPTH = 1500;

/**
 * Deepest element nesting, estimated by a linear scan of the tags (leniently:
 * tags whose end may be omitted do not count). htmlparser2 slows down badly on
 * absurd nesting (100,000 levels: 7 s), so such input is refused before parsing.
 */
export function htmlNestingDepth(html: string): number {
  let depth = 0;
  let max = 0;
  const markup = html.replace(/<!--[\s\S]*?-->|<(script|style|textarea)\b[\s\S]*?<\/\1\s*>/gi, ''); // text that may hold '<'
  for (const m of markup.matchAll(/<(\/?)([a-zA-Z][\w-]*)[^>]*?(\/?)>/g)) {
    const name = m[2].toLowerCase();
    if (NO_DEPTH.has(name) || m[3]) continue;
    if (m[1]) depth = Math.max(0, depth - 1);
    else if (++depth > max) max = depth;
  }
  return max;
}

/**
 * Converts an HTML document or fragment to markdown. When the page has a
 * <title> but no <h1>, the title becomes the top heading, so every chunk's
 * title path starts with what the page is.
 */
export function htmlToMarkdown(html: string): HtmlToMarkdownResult {
  const doc = parseDocument(html, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
  const depth = treeDepth(doc.children);
  if (depth > MAX_HTML_DEPTH) throw new HtmlTooDeepError(depth);
  const titleEl = findElement(
    doc.children,
    (el) => el.name === 'title',
    (el) => el.name === 'body',
  );
  const title = titleEl ? textContent(titleEl).replace(/\s+/g, ' ').trim() || undefined : undefined;
  let text = renderFragment(doc.children).replace(/\n{3,}/g, '\n\n');
  if (title && !findElement(doc.children, (el) => el.name === 'h1')) text = `# ${title}\n\n${text}`;
  return { text: text.trim(), ...(title ? { title } : {}) };
}

export class HtmlTooDeepError extends Error {
  constructor(readonly depth: number) {
    super(`elements nest ${depth} levels deep (more than ${MAX_HTML_DEPTH}; unclosed tags?)`);
  }
}
