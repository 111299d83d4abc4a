// The gateway's sources import one another without cycles (type-only imports
// included: a cycle of types is still two files that cannot be read apart),
// and the HTTP/1.1 transport (src/http1/) knows nothing of the rest of the
// gateway. Read from the TypeScript sources with a small parser of their
// import and export lines, so that the check needs no build and no tool.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
// `import ... from './x.js'`, `export ... from '../y.js'`, `import './z.js'`, `import('./w.js')`.
const RELATIVE_SPECIFIER = /(?:^|\n)\s*(?:import|export)\s(?:[^;'"]*?\sfrom\s)?\s*'(\.{1,2}\/[^']+)'|\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each file (relative to src) and the files it imports (compiled .js names mapped back to .ts). */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const match of text.matchAll(RELATIVE_SPECIFIER)) {
      const specifier = (match[1] ?? match[2])!;
      targets.push(relative(root, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))));
    }
    graph.set(relative(root, file), targets);
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the files along it (the first repeated at the end). */
function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (node: string): void => {
    if (onPath.has(node)) {
      cycles.push([...path.slice(path.indexOf(node)), node]);
      return;
    }
    if (done.has(node) || !graph.has(node)) return;
    path.push(node);
    onPath.add(node);
    for (const next of graph.get(node)!) visit(next);
    onPath.delete(node);
    path.pop();
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) visit(node);
  return cycles;
}

describe('the gateway source imports', () => {
  const graph = importGraph(SRC);

  it('are read: the server and the relay import what they are known to', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('server.ts')).toEqual(expect.arrayContaining(['http1/lean-front.ts', 'http1/node-front.ts', 'relay/front-serve.ts']));
    expect(graph.get('relay/upstream.ts')).toEqual(expect.arrayContaining(['http1/agent.ts', 'http1/exchange.ts']));
    expect(graph.get('http1/lean-front.ts')).toEqual(expect.arrayContaining(['http1/exchange.ts', 'http1/head-parser.ts', 'http1/lean-exchange.ts']));
  });

  it('the cycle finder finds a cycle, a self-import and nothing in a tree', () => {
    const cyclic = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', ['d.ts']],
    ]);
    expect(findCycles(cyclic)).toEqual([
      ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
      ['d.ts', 'd.ts'],
    ]);
    expect(findCycles(new Map([['a.ts', ['b.ts', 'c.ts']], ['b.ts', ['c.ts']], ['c.ts', []]]))).toEqual([]);
  });

  it('have no cycles', () => {
    const cycles = findCycles(graph).map((cycle) => cycle.join(' -> '));
    expect(cycles).toEqual([]);
  });

  it('of the HTTP/1.1 transport stay inside http1/ (it knows nothing of relaying, billing or channels)', () => {
    const outside = [...graph].flatMap(([file, targets]) =>
      file.startsWith('http1/') ? targets.filter((t) => !t.startsWith('http1/')).map((t) => `${file} -> ${t}`) : [],
    );
    expect(outside).toEqual([]);
    expect([...graph.keys()].filter((f) => f.startsWith('http1/')).length).toBeGreaterThanOrEqual(7);
  });
});
