// What the benches that run kbchat read of its process from /proc: VmRSS and
// friends, its child processes, and its mappings grouped (WASM memories,
// malloc, the rest), plus the process's own report of its V8 heaps
// (KBCHAT_MEMORY_DIAG=1, asked with SIGUSR2). Used by memory-bench.mjs and
// import-bench.mjs.
import { readdirSync, readFileSync } from 'node:fs';

export const kB = (text, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
export const mb = (kb) => kb / 1024;
export const f1 = (kb) => `${mb(kb).toFixed(1)} MB`;

export function status(pid) {
  try {
    const t = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      rss: kB(t, 'VmRSS'),
      hwm: kB(t, 'VmHWM'),
      anon: kB(t, 'RssAnon'),
      file: kB(t, 'RssFile'),
      shmem: kB(t, 'RssShmem'),
      threads: Number(/^Threads:\s+(\d+)/m.exec(t)?.[1] ?? 0),
    };
  } catch {
    return null; // gone
  }
}

export function parentPid(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0; // exited meanwhile
  }
}

/** Every descendant pid of `pid` (kbchat start may run initdb or a model server as a child). */
export function descendants(pid) {
  const parentOf = new Map();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      parentOf.set(Number(e), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* exited meanwhile */
    }
  }
  const out = [];
  const walk = (p) => {
    for (const [c, pp] of parentOf) if (pp === p) (out.push(c), walk(c));
  };
  walk(pid);
  return out;
}

export function childrenRss(pid) {
  let rss = 0;
  const names = [];
  for (const c of descendants(pid)) {
    const s = status(c);
    if (!s) continue;
    rss += s.rss;
    names.push(`${c}:${readFileSync(`/proc/${c}/comm`, 'utf8').trim()}`);
  }
  return { rss, names };
}

/**
 * /proc/<pid>/smaps in groups. WASM memories: V8 reserves each one with a
 * 2 GiB inaccessible guard below it and ~10 GiB above, and makes the pages in
 * use read-write: so a read-write anonymous mapping right above a 2 GiB
 * `---p` one (PGlite's two stores and the embedding model's tfjs backend).
 * malloc arenas: glibc gives each thread that mallocs a 64 MiB-aligned heap
 * (read-write part + `---p` rest = 64 MiB), the main thread's is [heap];
 * ArrayBuffers' backing stores and native libraries' memory live there or,
 * when large, in their own anonymous mappings. The rest of the anonymous
 * memory is mostly V8's heaps (one per thread's isolate) and thread stacks.
 */
export function smapsGroups(pid) {
  const maps = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) maps.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3], path: head[4].trim(), rss: 0 });
    else if (maps.length && line.startsWith('Rss:')) maps.at(-1).rss = kB(line, 'Rss');
  }
  const MiB = 1024n * 1024n;
  const anon = (m) => m && (!m.path || m.path.startsWith('[anon'));
  const sizeMiB = (m) => Number((m.end - m.start) / MiB);
  const groups = { wasm: 0, arenas: 0, anon: 0, heap: 0, node: 0, libs: 0, files: 0, stack: 0 };
  const wasm = [];
  maps.forEach((m, i) => {
    const prev = maps[i - 1];
    const next = maps[i + 1];
    if (anon(m)) {
      if (m.perms.startsWith('rw') && anon(prev) && prev.perms === '---p' && prev.end === m.start && sizeMiB(prev) === 2048) {
        groups.wasm += m.rss;
        wasm.push({ rss: m.rss, committed: sizeMiB(m) * 1024 });
      } else if (
        m.perms.startsWith('rw') &&
        m.start % (64n * MiB) === 0n &&
        anon(next) &&
        next.perms === '---p' &&
        next.start === m.end &&
        next.end - m.start === 64n * MiB
      )
        groups.arenas += m.rss;
      else if (m.perms.startsWith('rw') && m.start % (64n * MiB) === 0n && m.end - m.start === 64n * MiB)
        groups.arenas += m.rss; // an arena grown to its whole 64 MiB
      else groups.anon += m.rss;
    } else if (m.path === '[heap]') groups.heap += m.rss;
    else if (m.path.startsWith('[stack')) groups.stack += m.rss;
    else if (m.path.startsWith('['))
      groups.libs += m.rss; // vdso, vvar
    else if (m.path === process.execPath || /\/node$/.test(m.path)) groups.node += m.rss;
    else if (/\.so(\.|$)/.test(m.path)) groups.libs += m.rss;
    else groups.files += m.rss;
  });
  wasm.sort((a, b) => b.committed - a.committed);
  return { groups, wasm };
}

/** What the process says of its main thread (KBCHAT_MEMORY_DIAG=1), asked with SIGUSR2. */
export async function selfReport(kb) {
  const before = (kb.output().match(/\[memory\] /g) ?? []).length;
  process.kill(kb.pid, 'SIGUSR2');
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const lines = [...kb.output().matchAll(/\[memory\] (\{.*\})/g)];
    if (lines.length > before) return JSON.parse(lines.at(-1)[1]);
  }
  return null;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
