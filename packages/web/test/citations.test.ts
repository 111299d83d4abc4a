// How an answer's markdown is rendered (src/chat/markdown.ts): citation
// markers that name a quote become buttons, others stay text, markers in code
// stay code, the model's HTML is shown and never run, and code is highlighted.
import { describe, expect, it } from 'vitest';
import { markdownToHtml } from '../src/chat/markdown.js';

const buttons = (html: string) => [...html.matchAll(/<button type="button" class="cite" data-cite="(\d+)"/g)].map((m) => Number(m[1]));

describe('citation rendering', () => {
  it('makes a button of each marker that names a quote', () => {
    expect(buttons(markdownToHtml('Etna is in Sicily [1]. The Alps hold Aletsch [2].', 2))).toEqual([1, 2]);
    expect(buttons(markdownToHtml('Both agree [1][2].', 2))).toEqual([1, 2]);
    expect(buttons(markdownToHtml('Quote twelve [12].', 12))).toEqual([12]);
  });

  it('leaves a marker with no quote behind it as text', () => {
    const html = markdownToHtml('See [3] and [0] and [1].', 2);
    expect(buttons(html)).toEqual([1]);
    expect(html).toContain('See [3] and [0] and');
    expect(buttons(markdownToHtml('No quotes at all [1].', 0))).toEqual([]);
  });

  it('leaves markers inside code alone, and links stay links', () => {
    const html = markdownToHtml('Use `arr[1]` here [1].\n\n```js\nconst x = a[1];\n```\n\n[docs](https://example.com/a)', 1);
    expect(buttons(html)).toEqual([1]);
    expect(html).toContain('<code>arr[1]</code>');
    expect(html).toMatch(/<pre><code class="hljs language-js">.*a\[<span class="hljs-number">1<\/span>\]/s);
    expect(html).toContain('<a href="https://example.com/a">docs</a>');
  });

  it("shows the model's HTML as text", () => {
    const html = markdownToHtml('Hello <img src=x onerror="alert(1)"> <script>alert(2)</script> [1]', 1);
    expect(html).not.toMatch(/<img|<script/);
    expect(html).toContain('&#60;img');
    expect(buttons(html)).toEqual([1]);
  });

  it('renders lists, tables and unknown code languages', () => {
    const html = markdownToHtml('1. one [1]\n2. two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```brainfuck\n+[<>]\n```', 1);
    expect(html).toContain('<ol>');
    expect(html).toContain('<table>');
    expect(html).toContain('<pre><code class="hljs">+[&#60;&#62;]</code></pre>');
    expect(buttons(html)).toEqual([1]);
  });
});
