// Lines starting with "#" in text that is not Markdown (a plain text file, a
// PDF's text). The chunker reads its input as Markdown, where "# words" is a
// heading: a shell or config comment in an example ("# update-mime-database
// command. DO NOT EDIT!") became the title path of every chunk after it.
// Such a line, and the rest of its paragraph (the example it opens), is put
// in a code fence instead, which the chunker keeps whole and never reads
// headings in.
//
// In a PDF no line is a heading this way (a PDF has no Markdown). In a plain
// text file a "#" line still is one when it stands as a Markdown heading
// would: the first line of its paragraph, "#" at the line start, not ending
// like a sentence (. ! , ;) and not followed by a line opening with the same
// "#"s (two such lines in a row are a comment block).

// What the chunker reads as a heading (markdown-blocks.ts).
const HASH_LINE = /^ {0,3}(#{1,6})[ \t]+\S/;
const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

export interface CommentLineOptions {
  /** Whether a "#" line may be a Markdown heading (plain text) or never is (PDF). */
  headings: boolean;
}

/** The text with every paragraph's "#" lines that are not headings fenced as code, from the first to the paragraph's end. */
export function fenceCommentLines(text: string, options: CommentLineOptions): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let paragraph: string[] = [];
  const endParagraph = () => {
    const at = paragraph.findIndex((line, i) => HASH_LINE.test(line) && !(options.headings && isHeading(paragraph, i)));
    if (at < 0) out.push(...paragraph);
    else out.push(...paragraph.slice(0, at), ...fenced(paragraph.slice(at)));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line)?.[1];
    if (fence) {
      // Code already fenced (a PDF's monospaced lines) stays as it is, to its closing fence.
      endParagraph();
      out.push(line);
      for (i++; i < lines.length; i++) {
        out.push(lines[i]!);
        if (lines[i]!.trim().startsWith(fence) && lines[i]!.trim().replace(/[`~]/g, '') === '') break;
      }
    } else if (!line.trim()) {
      endParagraph();
      out.push(line);
    } else paragraph.push(line);
  }
  endParagraph();
  return out.join('\n');
}

function isHeading(paragraph: string[], i: number): boolean {
  const line = paragraph[i]!;
  const marks = /^(#{1,6})\s+\S/.exec(line)?.[1];
  if (i !== 0 || !marks) return false;
  if (/[.!,;]\s*$/.test(line)) return false;
  return HASH_LINE.exec(paragraph[1] ?? '')?.[1] !== marks;
}

/** Lines in a code fence longer than any backtick run inside them. */
function fenced(lines: string[]): string[] {
  const longest = lines.reduce((max, line) => Math.max(max, ...(line.match(/`+/g) ?? []).map((run) => run.length)), 0);
  const marker = '`'.repeat(Math.max(3, longest + 1));
  return [marker, ...lines, marker];
}
