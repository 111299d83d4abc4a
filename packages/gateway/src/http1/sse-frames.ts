// The stream relay's fast path. Once an answer flows, an upstream's frames
// are nearly all `data: {...}\n\n` that need no parsing. Taking a run of them
// as one block (one scan for what may matter, one replace for the
// `"usage":null` the gateway asked for) instead of event by event through the
// SSE parser costs a fraction per chunk, and the same bytes go out.

const LF = 10;
const DONE_LINE = 'data: [DONE]';

/** Upstream frames passed through unparsed, kept in bulk; read only when the upstream reports no usage. */
export class RawFrames {
  constructor(readonly text: string) {}

  /** The data of each frame, as the SSE parser would have handed it on. */
  data(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.text.length;) {
      const end = this.text.indexOf('\n', i);
      out.push(this.text.slice(i + 6, end));
      i = end + 2;
    }
    return out;
  }
}

/**
 * Where the run of plain frames that starts at `from` ends, at most at
 * `limit`: frames of the form `data: <line>\n\n` (no CR, no other field, no
 * comment, no [DONE]). For such frames the SSE parser yields exactly those
 * lines as data, and re-framing each as `data: <data>\n\n` gives back the
 * same bytes, so the run can go out as it came.
 */
export function plainFramesEnd(text: string, from: number, limit: number): number {
  const cr = text.indexOf('\r', from);
  if (cr >= 0 && cr < limit) limit = cr;
  let i = from;
  while (i < limit && text.startsWith('data: ', i)) {
    const nl = text.indexOf('\n', i);
    if (nl < 0 || nl + 2 > limit || text.charCodeAt(nl + 1) !== LF) break;
    if (nl - i === DONE_LINE.length && text.startsWith(DONE_LINE, i)) break;
    i = nl + 2;
  }
  return i;
}

/**
 * UTF-8 text of an upstream's reads. A read that ends on an ASCII byte, with
 * no partial character held from the one before, is decoded directly (about
 * half the cost of the streaming TextDecoder); anything else goes through the
 * decoder, which keeps a character split across reads. The first read always
 * does, so a byte order mark is dropped as before.
 */
export class ChunkDecoder {
  private readonly decoder = new TextDecoder();
  private holding = true;

  decode(part: Buffer): string {
    const last = part.length ? part[part.length - 1]! : 0;
    if (!this.holding && last < 0x80) return part.toString('utf8');
    this.holding = last >= 0x80;
    return this.decoder.decode(part, { stream: true });
  }
}
