// @vitest-environment node
// An answer's trace rendered to HTML (react-dom/server, no browser): the
// search's dropped results with the rule that dropped each, one row per model
// call with its request id, and the cost's format. The browser test
// (trace.test.ts) checks the same against a real kbchat start.
import { QueryClientProvider } from '@tanstack/react-query';
import { createElement, type ReactElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import type { StepRecord } from '../src/api.js';
import { createQueryClient } from '../src/query.js';

/** The trace as the app renders it: inside a query client (the model-call rows read the gateway's log through it). */
const withQueries = (ui: ReactElement) => createElement(QueryClientProvider, { client: createQueryClient() }, ui);

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

const dropped = (id: string, reason: 'similarity' | 'limit', q: string) => ({
  id,
  q,
  a: '',
  chunkIndex: 1,
  datasetId: 'd',
  collectionId: 'c',
  sourceName: 'notes.md',
  sourceId: 'c',
  score: [{ type: 'embedding', value: 0.41, index: 3 }],
  reason,
  similarityValue: 0.412,
  tokens: 57,
});

const records: StepRecord[] = [
  {
    moduleName: 'Dataset search',
    moduleType: 'datasetSearchNode',
    runningTime: 0.05,
    searchMode: 'embedding',
    similarity: 0.5,
    limit: 100,
    quoteList: [],
    found: 5,
    dropped: [dropped('x1', 'similarity', 'Too far away'), dropped('x2', 'limit', 'Did not fit')],
    modelCalls: [{ step: 'embeddings', kind: 'embeddings', model: 'emb', requestId: 'req-embed-1', runningTime: 0.02 }],
  },
  {
    moduleName: 'AI chat',
    moduleType: 'chatNode',
    runningTime: 0.4,
    model: 'llm',
    requestId: 'req-chat-2',
    modelCalls: [{ step: 'chatNode', kind: 'chat', model: 'llm', requestId: 'req-chat-2', runningTime: 0.4 }],
  },
  {
    moduleName: 'Content extraction',
    moduleType: 'contentExtract',
    runningTime: 0.1,
    model: 'llm',
    error: 'Connection error',
    modelCalls: [{ step: 'contentExtract', kind: 'chat', model: 'llm', runningTime: 0.1, error: 'Connection error: http://gw' }],
  },
];

describe("an answer's trace", () => {
  it('lists the dropped results collapsed, each with its rule and the number it read', async () => {
    const { Steps } = await import('../src/chat/Steps.js');
    const html = renderToStaticMarkup(withQueries(createElement(Steps, { records })));
    expect(html).toMatch(/<details class="trace-dropped"><summary><span>Dropped \(2\)<\/span><\/summary>/);
    expect(html).toContain('below the similarity threshold: 0.412 &lt; 0.5');
    expect(html).toContain('past the token budget (100 tokens); it has 57');
    expect(html).toContain('Too far away');
    // Ranks from 1, as in the kept quotes.
    expect(html).toContain('meaning 0.410 #4');
  });

  it('shows one row per model call with its request id and a copy button; a call that never reached the gateway says so', async () => {
    const { Steps } = await import('../src/chat/Steps.js');
    const html = renderToStaticMarkup(withQueries(createElement(Steps, { records })));
    const rows = [...html.matchAll(/<tr( class="error")?><td><span>([^<]+)<\/span><\/td><td><code>([^<]+)<\/code>/g)].map((m) => [m[2], m[3], Boolean(m[1])]);
    expect(rows).toEqual([
      ['Embeddings', 'emb', false],
      ['Answer', 'llm', false],
      ['Extraction', 'llm', true],
    ]);
    expect(html).toContain('<code>req-embed-1</code>');
    expect(html).toContain('<code>req-chat-2</code>');
    expect(html.match(/Copy id/g)).toHaveLength(2);
    expect(html).toContain('the gateway was not reached');
    expect(html).toContain('Connection error: http://gw');
    // The chat step's own request id line gives way to the table.
    expect(html).not.toContain('request id req-chat-2');
    // Before the gateway's log is read, the latency is the platform's own.
    expect(html).toContain('0.4 s');
  });

  it('formats costs in the gateway units with their significant digits', async () => {
    const { formatCost } = await import('../src/chat/ModelCalls.js');
    expect(formatCost(0)).toBe('0');
    expect(formatCost(0.0123456)).toBe('0.0123');
    expect(formatCost(1.5)).toBe('1.5000');
    expect(formatCost(0.000012345)).toBe('0.000012');
  });
});
