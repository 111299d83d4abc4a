// Splits markdown into the blocks the chunker keeps whole when it can:
// headings, fenced code, pipe tables, and text blocks (paragraphs, lists,
// quotes: anything between blank lines). Only what chunking needs is parsed;
// this is not a full CommonMark parser.

export type MarkdownBlock =
  | { kind: 'heading'; level: number; /** Normalised line, e.g. `## Setup`. */ text: string }
  | { kind: 'code'; text: string; open: string; close: string; lines: string[] }
  | { kind: 'table'; text: string; header: string; rows: string[] }
  | { kind: 'text'; text: string };

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const TABLE_SEPARATOR = /^ {0,3}\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;

function isTableStart(lines: string[], i: number): boolean {
  const next = lines[i + 1];
  return (
    next !== undefined &&
    lines[i].includes('|') &&
    /^ {0,3}\S/.test(lines[i]) &&
    TABLE_SEPARATOR.test(next) &&
    (next.includes('|') || lines[i].trim().startsWith('|'))
  );
}

export function parseMarkdownBlocks(markdown: string): MarkdownBlock[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: MarkdownBlock[] = [];
  let para: string[] = [];
  const endParagraph = () => {
    // Trailing spaces are not content; leading indentation is (lists, quotes).
    const text = para.join('\n').replace(/\s+$/, '');
    if (text.trim()) blocks.push({ kind: 'text', text });
    para = [];
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE_OPEN.exec(line);
    if (fence && !(fence[2][0] === '`' && fence[3].includes('`'))) {
      endParagraph();
      const marker = fence[2];
      const body: string[] = [];
      let close = marker;
      let j = i + 1;
      for (; j < lines.length; j++) {
        const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(lines[j]);
        if (m && m[1][0] === marker[0] && m[1].length >= marker.length) {
          close = lines[j].trim();
          break;
        }
        body.push(lines[j]);
      }
      const open = line.trim();
      blocks.push({ kind: 'code', open, close, lines: body, text: [open, ...body, close].join('\n') });
      i = j; // an unclosed fence runs to the end, as in CommonMark
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      const title = heading[2].trim();
      if (title) blocks.push({ kind: 'heading', level: heading[1].length, text: `${heading[1]} ${title}` });
      continue;
    }
    if (isTableStart(lines, i)) {
      endParagraph();
      const header = `${line}\n${lines[i + 1]}`;
      const rows: string[] = [];
      let j = i + 2;
      for (; j < lines.length && lines[j].trim() !== '' && lines[j].includes('|'); j++) rows.push(lines[j]);
      blocks.push({ kind: 'table', header, rows, text: [header, ...rows].join('\n') });
      i = j - 1;
      continue;
    }
    if (line.trim() === '') endParagraph();
    else para.push(line);
  }
  endParagraph();
  return blocks;
}
