// The contracts are what the web app imports in a browser: every module of
// the package's import graph may import zod and its own modules, nothing else
// (no node: builtins, no server package). And the schemas parse as the
// services do: defaults filled in, transforms applied, refusals with the
// messages the 400s carry.
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  appSettingsSchema,
  chatRequestSchema,
  createKeyBody,
  DEFAULT_QUOTE_PROMPT,
  listCollectionsBody,
  MAX_PUSH,
  publicDatasetSchema,
  pushDataBody,
  priceBody,
  type PublicDataset,
} from '@kbchat/contracts';
import pkg from '../package.json' with { type: 'json' };

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const entries = Object.values(pkg.exports).map((e) => join(root, e.source));

/** Every module reachable from `entries`, with the bare specifiers each imports (import and export ... from, static and dynamic). */
function importGraph(from: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const todo = [...from];
  while (todo.length) {
    const file = todo.pop()!;
    if (graph.has(file)) continue;
    const text = readFileSync(file, 'utf8');
    const specifiers = [
      ...text.matchAll(
        /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g,
      ),
    ].map((m) => m[1] ?? m[2] ?? m[3]!);
    const bare: string[] = [];
    for (const s of specifiers) {
      if (s.startsWith('.')) todo.push(resolve(dirname(file), s.replace(/\.js$/, '.ts')));
      else bare.push(s);
    }
    graph.set(file, bare);
  }
  return graph;
}

describe('the contracts package', () => {
  it('imports nothing but zod and its own modules: no node: builtins, no server package', () => {
    const graph = importGraph(entries);
    // The graph is the whole package, not only the entries.
    expect(graph.size).toBeGreaterThan(20);
    const foreign = [...graph].flatMap(([file, bare]) => bare.filter((s) => s !== 'zod').map((s) => `${relative(root, file)}: ${s}`));
    expect(foreign).toEqual([]);
    expect(Object.keys(pkg.dependencies)).toEqual(['zod']);
  });

  it('parses request bodies as the platform does: defaults, transforms and limits', () => {
    expect(listCollectionsBody.parse({ datasetId: 'd1' })).toEqual({ datasetId: 'd1', offset: 0, pageSize: 30 });
    const key = createKeyBody.parse({ limit: { expiredTime: '2030-01-02T03:04:05.000Z' } });
    expect(key).toEqual({ name: 'API key', limit: { expiredTime: Date.parse('2030-01-02T03:04:05.000Z') } });
    const tooMany = pushDataBody.safeParse({ collectionId: 'c1', data: Array.from({ length: MAX_PUSH + 1 }, () => ({ q: 'x' })) });
    expect(tooMany.success).toBe(false);
    expect(tooMany.error?.issues[0]?.path).toEqual(['data']);
    const settings = appSettingsSchema.parse({ model: 'm' });
    expect(settings.search).toEqual({
      searchMode: 'mixedRecall',
      similarity: 0,
      limit: 3000,
      usingReRank: false,
      queryExtension: { enabled: false, background: '' },
      asTool: false,
    });
    expect(settings.classify).toBeNull();
  });

  it("keeps the gateway's own refusal messages", () => {
    const price = priceBody.safeParse({ input_price: -1, output_price: 1 });
    expect(price.error?.issues.some((i) => i.message === 'must be >= 0')).toBe(true);
    const chat = chatRequestSchema.safeParse({ model: 'gpt\u0001', messages: [] });
    expect(chat.error?.issues.map((i) => i.message)).toEqual(['must not contain control characters', 'must be a non-empty array']);
    // Unknown OpenAI fields pass through untouched.
    expect(chatRequestSchema.parse({ model: 'm', messages: [{ role: 'user', content: 'hi' }], seed: 7 }).seed).toBe(7);
  });

  it('round-trips an answer shape through its schema and JSON', () => {
    const dataset: PublicDataset = {
      _id: 'd1',
      id: 'd1',
      name: 'Docs',
      intro: '',
      type: 'dataset',
      vectorModel: { model: 'sim-embed-384' },
      vectorDimensions: 384,
      agentModel: null,
      ocr: true,
      collectionCount: 2,
      dataCount: 10,
      createTime: '2026-01-01T00:00:00.000Z',
      updateTime: '2026-01-01T00:00:00.000Z',
    };
    expect(publicDatasetSchema.parse(JSON.parse(JSON.stringify(dataset)))).toEqual(dataset);
    expect(publicDatasetSchema.safeParse({ ...dataset, type: 'folder' }).success).toBe(false);
    expect(DEFAULT_QUOTE_PROMPT).toContain('{{quote}}');
  });
});
