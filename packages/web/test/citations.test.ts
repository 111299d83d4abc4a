// @vitest-environment node
// How an answer's markdown is rendered (src/chat/markdown.ts): citation
// markers that name a quote become buttons, others stay text, markers in code
// stay code, the model's HTML is shown and never run, and code is highlighted.
// Then an answer and its steps rendered to HTML (react-dom/server, no browser).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import type { StepRecord } from '../src/api.js';
import { markdownBlocks, markdownToHtml } from '../src/chat/markdown.js';

// i18n reads the saved language when loaded, and its hook has no server
// snapshot: the components get the same translations through a plain hook.
vi.hoisted(() => {
  (globalThis as { localStorage?: unknown }).localStorage = { getItem: () => 'en', setItem: () => {} };
});
vi.mock('../src/i18n.js', async (load) => {
  const real = await load<typeof import('../src/i18n.js')>();
  // The tables of the pages these components are on (core and chat), as the share page's entry adds them.
  real.addMessages(await import('../src/messages.js'), await import('../src/chat/messages.js'));
  return {
    ...real,
    useLang: () => ({
      lang: 'en' as const,
      t: (key: Parameters<typeof real.translate>[1], vars?: Record<string, string | number>) => real.translate('en', key, vars),
    }),
  };
});
// DOMPurify needs a DOM; here it passes the HTML through (what it removes is the browser test's business).
vi.mock('dompurify', () => ({ default: { sanitize: (html: string) => html } }));

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

const QUOTES = [
  {
    id: 'd1',
    q: 'The keeper painted the tower teal in 1987.',
    a: '',
    sourceName: 'keeper.md',
    score: [
      { type: 'embedding', value: 0.8123, index: 0 },
      { type: 'fullText', value: 2.5, index: 1 },
    ],
  },
  {
    id: 'd2',
    q: 'The harbour master rings the bell at noon.',
    a: 'Every day.',
    sourceName: 'harbour.md',
    score: [{ type: 'embedding', value: 0.61, index: 1 }],
  },
];
const SEARCH: StepRecord = {
  moduleName: 'Dataset search',
  moduleType: 'datasetSearchNode',
  runningTime: 0.04,
  searchMode: 'mixedRecall',
  similarity: 0.4,
  limit: 1500,
  quoteList: QUOTES,
  queries: ['who painted the tower'],
};

describe('an answer rendered block by block', () => {
  const answer = [
    '# Setup',
    '',
    'Install it first [1].',
    '',
    '- one',
    '- two [2]',
    '',
    '```bash',
    'npm ci',
    '```',
    '',
    '| a | b |',
    '| - | - |',
    '| 1 | 2 |',
    '',
    'Done.',
  ].join('\n');
  const strip = (html: string) => html.replace(/\s+/g, '');

  it('renders the same page as the whole text at once', () => {
    const blocks = markdownBlocks(answer);
    expect(blocks.length).toBe(6);
    expect(strip(blocks.map((b) => markdownToHtml(b, 2)).join(''))).toBe(strip(markdownToHtml(answer, 2)));
  });

  it('changes only the last block while the text grows', () => {
    const whole = markdownBlocks(answer);
    for (let end = 1; end < answer.length; end += 7) {
      const part = markdownBlocks(answer.slice(0, end));
      // Every block but the growing last one is already final.
      expect(part.slice(0, -1)).toEqual(whole.slice(0, part.length - 1));
    }
  });
});

describe('an answer rendered', () => {
  it('has a button for each quoted marker, named for the reader, and leaves the rest as text', async () => {
    const { MessageView } = await import('../src/chat/Message.js');
    const message = { id: 'a1', role: 'assistant' as const, text: 'Teal [1][2], see `x[1]` and [3] and [12].', records: [SEARCH] };
    const html = renderToStaticMarkup(createElement(MessageView, { message }));
    expect(buttons(html)).toEqual([1, 2]);
    expect(html).toContain('aria-label="Source 1"');
    expect(html).toContain('<code>x[1]</code>');
    expect(html).toContain('and [3] and [12].');
    // The actions under it; Steps only because it has records.
    for (const name of ['Copy', 'Steps']) expect(html).toContain(`<span>${name}</span>`);
    const bare = renderToStaticMarkup(createElement(MessageView, { message: { ...message, records: undefined } }));
    expect(buttons(bare)).toEqual([]);
    expect(bare).not.toContain('<span>Steps</span>');
  });

  it('shows an error with its request id, and a stopped answer as stopped', async () => {
    const { MessageView } = await import('../src/chat/Message.js');
    const html = renderToStaticMarkup(
      createElement(MessageView, {
        message: { id: 'a2', role: 'assistant', text: 'Half', stopped: true, error: { message: 'Connection error: down', requestId: 'req-7' } },
      }),
    );
    expect(html).toContain('<span>Stopped</span>');
    expect(html).toMatch(/role="alert"[^>]*><span>Connection error: down<\/span><span class="muted"> \(request id req-7\)<\/span>/);
  });

  it('shows the steps: classification, question completion, the search with every score and rank, the model call', async () => {
    const { Steps } = await import('../src/chat/Steps.js');
    const records: StepRecord[] = [
      {
        moduleName: 'Question classification',
        moduleType: 'classifyQuestion',
        runningTime: 0.3,
        model: 'local-extractive',
        inputTokens: 50,
        outputTokens: 4,
        cqList: [{ id: 'lights', description: 'about lighthouses' }],
        cqResult: 'lights',
        requestId: 'gw-42',
      },
      {
        moduleName: 'Question completion',
        moduleType: 'queryExtension',
        runningTime: 0.2,
        model: 'local-extractive',
        queryExtensionResult: { model: 'local-extractive', queries: ['tower colour 1987'] },
      },
      SEARCH,
      { moduleName: 'AI chat', moduleType: 'chatNode', runningTime: 1.25, model: 'local-extractive', inputTokens: 321, outputTokens: 45, quoteCount: 2 },
    ];
    const html = renderToStaticMarkup(createElement(Steps, { records }));
    const text = html.replace(/<[^>]+>/g, '|');
    expect(text).toContain('Category: lights (about lighthouses)');
    expect(text).toContain('request id gw-42');
    expect(text).toContain('tower colour 1987');
    expect(text).toContain('mode meaning + keywords, similarity ≥ 0.4, token budget 1500');
    // Each quote with its source and each score with its rank in that list.
    expect(text).toMatch(/keeper\.md.*meaning 0\.812 #1.*keywords 2\.500 #2.*harbour\.md.*meaning 0\.610 #2/);
    expect(text).toContain('321 tokens in, 45 out');
    expect(text).toContain('1.25 s');
    expect(text).toContain('2 quotes');
  });
});
