// PPTX -> Markdown: each slide, in the presentation's order, under a heading
// `# Slide <n>: <title>` (so every chunk of it names its slide), then its
// text boxes in the order they were placed, a table as a Markdown table, and
// the speaker notes. A presentation is a zip of XML parts: the order of the
// slides is ppt/presentation.xml's list, each slide's notes are found through
// its relationships. Read with JSZip and htmlparser2 in XML mode: no
// library reads slides with their titles and notes kept apart.

import { isTag, isText, type AnyNode, type Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import JSZip from 'jszip';
import { IngestError } from '../errors.js';
import { checkZip } from './zip-entries.js';

export interface PptxReadOptions {
  filename?: string;
  /** Refuse a presentation whose entries expand past this (default 256 MiB). */
  maxExpandedBytes?: number;
}

/** A slide as read: its title, its other text blocks, its notes. */
export interface Slide {
  number: number;
  title: string;
  blocks: string[];
  notes: string;
}

export async function readPptx(buf: Uint8Array, opts: PptxReadOptions = {}): Promise<{ text: string; slides: Slide[] }> {
  const filename = opts.filename ?? 'The presentation';
  const data = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  checkZip(data, filename, 'a PowerPoint presentation (.pptx)', opts.maxExpandedBytes);
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(data);
  } catch (err) {
    throw new IngestError('corrupt_file', `${filename} could not be read as a PowerPoint presentation (.pptx): ${(err as Error)?.message ?? err}`, {
      cause: err,
    });
  }
  const presentation = await part(zip, 'ppt/presentation.xml');
  if (!presentation) throw new IngestError('corrupt_file', `${filename} is not a PowerPoint presentation (.pptx): it has no ppt/presentation.xml.`);
  const targets = await relationships(zip, 'ppt/presentation.xml');
  const slides: Slide[] = [];
  for (const id of elements(presentation, 'p:sldId')) {
    const path = targets.get(id.attribs['r:id'] ?? '');
    const slide = path ? await part(zip, path) : undefined;
    if (!slide || !path) continue;
    const notesPath = [...(await relationships(zip, path)).entries()].find(([, target]) => /\/notesSlides\//.test(target))?.[1];
    const notes = notesPath ? await part(zip, notesPath) : undefined;
    slides.push(readSlide(slide, slides.length + 1, notes));
  }
  return { text: slides.map(slideText).join('\n\n'), slides };
}

function slideText(s: Slide): string {
  const heading = `# Slide ${s.number}${s.title ? `: ${s.title}` : ''}`;
  return [heading, ...s.blocks, ...(s.notes ? [`Notes: ${s.notes}`] : [])].join('\n\n');
}

const TITLE_TYPES = new Set(['title', 'ctrTitle']);
/** Placeholders that show what the layout fills in (number, date, footer), not what the author wrote. */
const FURNITURE = new Set(['sldNum', 'dt', 'ftr', 'hdr', 'sldImg']);

function readSlide(slide: AnyNode[], number: number, notes: AnyNode[] | undefined): Slide {
  let title = '';
  const blocks: string[] = [];
  for (const shape of elements(slide, 'p:sp', 'p:graphicFrame')) {
    const type = elements(shape.children, 'p:ph')[0]?.attribs.type ?? '';
    if (FURNITURE.has(type)) continue;
    if (shape.name === 'p:graphicFrame') {
      const table = elements(shape.children, 'a:tbl')[0];
      if (table) blocks.push(markdownTable(table));
      continue;
    }
    const paragraphs = elements(shape.children, 'a:p').map(paragraphText).filter(Boolean);
    if (!title && TITLE_TYPES.has(type)) title = paragraphs.join(' ');
    else if (paragraphs.length) blocks.push(paragraphs.join('\n'));
  }
  const notesText = notes
    ? elements(notes, 'p:sp')
        .filter((shape) => elements(shape.children, 'p:ph')[0]?.attribs.type === 'body')
        .flatMap((shape) => elements(shape.children, 'a:p').map(paragraphText))
        .filter(Boolean)
        .join(' ')
    : '';
  return { number, title, blocks: blocks.filter((b) => b.trim()), notes: notesText };
}

/** A paragraph's runs joined; a line break inside it stays one. */
function paragraphText(p: Element): string {
  let out = '';
  const walk = (nodes: AnyNode[]) => {
    for (const n of nodes) {
      if (!isTag(n)) continue;
      if (n.name === 'a:t') out += n.children.map((c) => (isText(c) ? c.data : '')).join('');
      else if (n.name === 'a:br') out += '\n';
      else walk(n.children);
    }
  };
  walk(p.children);
  return out.replace(/[ \t]+/g, ' ').trim();
}

function markdownTable(table: Element): string {
  const rows = elements(table.children, 'a:tr').map((tr) =>
    elements(tr.children, 'a:tc').map((tc) => elements(tc.children, 'a:p').map(paragraphText).filter(Boolean).join(' ').replace(/\|/g, '\\|')),
  );
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((r) => r.length));
  const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
  return [line(rows[0]!), line(Array(width).fill('---')), ...rows.slice(1).map(line)].join('\n');
}

/** Elements named `names`, in document order, outside those found (a shape inside a group is found, not its parts twice). */
function elements(nodes: AnyNode[], ...names: string[]): Element[] {
  const found: Element[] = [];
  const walk = (list: AnyNode[]) => {
    for (const n of list) {
      if (!isTag(n)) continue;
      if (names.includes(n.name)) found.push(n);
      else walk(n.children);
    }
  };
  walk(nodes);
  return found;
}

async function part(zip: JSZip, path: string): Promise<AnyNode[] | undefined> {
  const file = zip.file(path);
  if (!file) return undefined;
  return parseDocument(await file.async('string'), { xmlMode: true }).children;
}

/** A part's relationships: id -> the target's path in the zip. */
async function relationships(zip: JSZip, path: string): Promise<Map<string, string>> {
  const dir = path.slice(0, path.lastIndexOf('/'));
  const rels = await part(zip, `${dir}/_rels/${path.slice(dir.length + 1)}.rels`);
  const out = new Map<string, string>();
  for (const r of rels ? elements(rels, 'Relationship') : []) {
    const target = r.attribs.Target ?? '';
    out.set(r.attribs.Id ?? '', target.startsWith('/') ? target.slice(1) : resolvePath(dir, target));
  }
  return out;
}

function resolvePath(dir: string, target: string): string {
  const parts = dir.split('/');
  for (const piece of target.split('/')) {
    if (piece === '..') parts.pop();
    else if (piece !== '.') parts.push(piece);
  }
  return parts.join('/');
}
