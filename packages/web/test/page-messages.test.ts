// Each page of the build carries only its own areas' strings (issue 28): the
// public share page the shell's and the chat's, the platform app its areas',
// the gateway console its own. The web app is built here with Vite (in memory,
// not into dist/, which other tests serve), and each page's scripts are read
// from the module graph Vite reports: its entry chunk and every chunk it
// imports, statically or on demand, whatever their hashed names.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build, type Rolldown } from 'vite';
import { beforeAll, describe, expect, it } from 'vitest';
import { areas } from '../src/message-areas';

const WEB = join(import.meta.dirname, '..');
const SRC = join(WEB, 'src');

/** Every area's table, by its file under src/ (each area keeps a messages.ts beside its pages). */
const areaFiles = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f === 'messages.ts' || f.endsWith('/messages.ts'))
  .sort();

const PAGES = {
  share: ['chat/messages.ts', 'messages.ts'],
  index: ['apps/messages.ts', 'chat/messages.ts', 'datasets/messages.ts', 'messages.ts', 'settings/messages.ts', 'tools/messages.ts'],
  console: areaFiles.filter((f) => f.startsWith('console/')).concat('messages.ts'),
} as const;
type Page = keyof typeof PAGES;

let chunks: Rolldown.OutputChunk[] = [];
const keysOf = new Map<string, string[]>();

beforeAll(async () => {
  const out = await build({ root: WEB, configFile: join(WEB, 'vite.config.ts'), logLevel: 'silent', build: { write: false } });
  const output = (Array.isArray(out) ? out : [out as Rolldown.RolldownOutput]).flatMap((o) => o.output);
  chunks = output.filter((o): o is Rolldown.OutputChunk => o.type === 'chunk');
  for (const file of areaFiles) keysOf.set(file, Object.keys(((await import(join(SRC, file))) as { en: object }).en));
}, 120_000);

/** The chunks a page loads: its entry's, and every chunk they import, now or on demand. */
function chunksOf(page: Page): Rolldown.OutputChunk[] {
  const byFile = new Map(chunks.map((c) => [c.fileName, c]));
  const entry = chunks.find((c) => c.isEntry && c.name === page);
  if (!entry) throw new Error(`no entry chunk named ${page} in the build`);
  const seen = new Set<Rolldown.OutputChunk>();
  const visit = (c: Rolldown.OutputChunk) => {
    if (seen.has(c)) return;
    seen.add(c);
    for (const f of [...c.imports, ...c.dynamicImports]) visit(byFile.get(f)!);
  };
  visit(entry);
  return [...seen];
}

const codeOf = (page: Page) =>
  chunksOf(page)
    .map((c) => c.code)
    .join('\n');

/** The areas' tables a page's chunks hold, by file under src/. */
const tablesOf = (page: Page) =>
  chunksOf(page)
    .flatMap((c) => c.moduleIds)
    .map((id) => relative(SRC, id))
    .filter((f) => areaFiles.includes(f))
    .sort();

/** The keys of every area that a page's code names, as a quoted string (minified code quotes with ", ' or `). */
const keysNamed = (page: Page) => {
  const code = codeOf(page);
  return [...keysOf.values()].flat().filter((k) => code.includes(`"${k}"`) || code.includes(`'${k}'`) || code.includes(`\`${k}\``));
};

describe("each page's strings", () => {
  it('finds every area the messages test checks', () => {
    expect(areaFiles.length).toBe(areas.length);
  });

  it("gives the share page the chat strings, in English and Chinese, and none of the consoles'", async () => {
    expect(tablesOf('share')).toEqual([...PAGES.share].sort());
    const code = codeOf('share');
    const chat = await import('../src/chat/messages');
    for (const text of [chat.en['chat.send'], chat.zh['chat.send'], chat.en['chat.feedbackSend'], chat.zh['chat.feedbackSend']]) expect(code).toContain(text);
    const gateway = await import('../src/console/messages');
    const datasets = await import('../src/datasets/messages');
    for (const text of [gateway.en['console.signinTitle'], gateway.zh['console.title'], datasets.en['datasets.collections.total']])
      expect(code).not.toContain(text);
  });

  it.each(Object.keys(PAGES) as Page[])("gives %s only its areas' tables, and its code names no key of another area", (page) => {
    expect(tablesOf(page)).toEqual([...PAGES[page]].sort());
    const own = new Set(PAGES[page].flatMap((f) => keysOf.get(f)!));

    expect(keysNamed(page).filter((k) => !own.has(k))).toEqual([]);
  });
});
