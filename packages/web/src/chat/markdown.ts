// An answer's markdown as HTML: marked, code highlighted by highlight.js (a
// handful of languages, bundled), raw HTML from the model shown as text, and
// each citation marker [n] that names a quote made a button the chat shows
// the quote for. A marker inside code, or one with no quote behind it, stays
// text. The HTML is sanitised again (DOMPurify) where it is put in the page.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked, type Tokens } from 'marked';

for (const [name, lang] of Object.entries({ bash, css, javascript, json, python, sql, typescript, xml, yaml })) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['py'], { languageName: 'python' });

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

interface CiteToken extends Tokens.Generic {
  type: 'cite';
  raw: string;
  n: number;
}

interface CiteOptions {
  count: number;
  /** The button's accessible name, in the reader's language. */
  label: (n: number) => string;
}

function makeMarked(cites: () => CiteOptions): Marked {
  return new Marked({
    gfm: true,
    breaks: true,
    extensions: [
      {
        name: 'cite',
        level: 'inline',
        start: (src: string) => src.match(/\[\d/)?.index,
        tokenizer(src: string): CiteToken | undefined {
          const m = /^\[(\d{1,3})\]/.exec(src);
          return m ? { type: 'cite', raw: m[0], n: Number(m[1]) } : undefined;
        },
        renderer(token) {
          const { n, raw } = token as CiteToken;
          const { count, label } = cites();
          if (n < 1 || n > count) return escapeHtml(raw);
          return `<button type="button" class="cite" data-cite="${n}" aria-label="${escapeHtml(label(n))}">[${n}]</button>`;
        },
      },
    ],
    renderer: {
      // The model's HTML is shown, never run.
      html: ({ text }) => escapeHtml(text),
      code({ text, lang }) {
        const language = (lang ?? '').trim().split(/\s+/)[0]!.toLowerCase();
        const known = language && hljs.getLanguage(language);
        const body = known ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
        return `<pre><code class="hljs${known ? ` language-${escapeHtml(language)}` : ''}">${body}</code></pre>`;
      },
    },
  });
}

// marked's renderers take no per-call options: parse() is synchronous, so the
// current call's are set just before it.
let current: CiteOptions = { count: 0, label: (n) => `Source ${n}` };
const marked = makeMarked(() => current);

/**
 * The text's top-level blocks (paragraphs, lists, code, tables, headings) as
 * their markdown source. While an answer streams only its last block grows,
 * so a page that renders block by block renders one block per piece, not
 * the whole answer again.
 */
export function markdownBlocks(text: string): string[] {
  return marked.lexer(text).flatMap((token) => (token.type === 'space' ? [] : [token.raw]));
}

/** The answer's HTML, with buttons for markers 1..quoteCount. */
export function markdownToHtml(text: string, quoteCount: number, label: (n: number) => string = (n) => `Source ${n}`): string {
  current = { count: quoteCount, label };
  return marked.parse(text, { async: false });
}
