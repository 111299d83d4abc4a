// One process at a time on an embedded store. PGlite keeps its database in
// the memory of the process that opened it and writes it back on its own
// schedule: two processes on one directory each see only their own writes,
// and whichever stops last overwrites the other's (a dataset made on the
// second `kbchat start` was gone after both stopped). So opening a store
// takes `<store>.lock`, a file naming the process that holds it, and a
// second process refuses at once, naming that process.
//
// A holder is alive while its process exists. Not proper-lockfile: it judges
// a holder by the age of the lock (the holder touches it every few seconds),
// so a start after a `kill -9` must wait out that age, and a holder whose
// thread is stuck in one long query (an HNSW build blocks the platform's
// thread for minutes) loses the lock while it still writes. On Linux the lock
// also records the holder's start time and boot, so that its pid, reused by
// another process (a restarted container's pids start over), is not taken
// for it.
//
// Once the holder's services listen, the lock also says where
// (announceListening): `kbchat doctor` finds the kbchat of a data dir, and
// checks its ports, whatever ports it was started on.
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';

export interface StoreHolder {
  pid: number;
  hostname: string;
  /** The holder's command line, for the message. */
  command: string;
  /** When the holder process started (ISO). */
  startedAt: string;
  /** Linux: boot id and start time in clock ticks, which tell a pid's process from a later one with the same pid. */
  processId?: string;
  /** Where the holder's services listen, once they do (the address they are bound to). */
  listening?: Listening;
}

export interface ListenAddress {
  host: string;
  port: number;
}

export interface Listening {
  gateway?: ListenAddress;
  platform?: ListenAddress;
}

export class StoreInUseError extends Error {
  constructor(
    readonly store: string,
    readonly holder: StoreHolder,
  ) {
    const where = holder.hostname === hostname() ? '' : ` on host ${holder.hostname}`;
    const started = holder.startedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
    const remedy =
      where === ''
        ? 'stop that process first, or use another data directory'
        : `stop it first; if that process is gone (a removed container), delete ${lockPathOf(store)}`;
    super(`the embedded store ${store} is in use by process ${holder.pid}${where} (${holder.command}, started ${started}): ${remedy}`);
    this.name = 'StoreInUseError';
  }
}

/** The lock file beside a store's directory (inside it, initdb would find the directory not empty). */
function lockPathOf(store: string): string {
  return `${resolve(store)}.lock`;
}

function readProcessId(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22, counted after the command name, which may itself hold spaces and parentheses.
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return startTicks ? `${boot}:${startTicks}` : undefined;
  } catch {
    return undefined;
  }
}

const myProcessId = readProcessId('self');

/** Where this process's services listen, written into every lock it holds and takes. */
const listeningHere: Listening = {};

function me(): StoreHolder {
  return {
    pid: process.pid,
    hostname: hostname(),
    command: process.argv
      .map((a) => (/\s/.test(a) ? JSON.stringify(a) : a))
      .join(' ')
      .slice(0, 300),
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    processId: myProcessId,
    ...(listeningHere.gateway || listeningHere.platform ? { listening: { ...listeningHere } } : {}),
  };
}

/** Stores this process holds, each with its lock's text as written: a second open of one of them here is refused as well. */
const heldHere = new Map<string, string>();

function isAlive(holder: StoreHolder, lockPath: string): boolean {
  if (holder.hostname !== hostname()) return true; // its processes cannot be seen from here
  if (holder.pid === process.pid) return heldHere.has(lockPath) && (!holder.processId || holder.processId === myProcessId);
  if (holder.processId && myProcessId) return readProcessId(holder.pid) === holder.processId;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

function readHolder(lockPath: string): { text: string; holder?: StoreHolder } | undefined {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const holder = JSON.parse(text) as StoreHolder;
    return { text, holder: Number.isInteger(holder.pid) ? holder : undefined };
  } catch {
    return { text }; // not ours, or damaged: nobody can be named as its holder
  }
}

/** The live process other than this one that holds the store, if any (a check before anything is started). */
export function storeHolder(store: string): StoreHolder | undefined {
  const lockPath = lockPathOf(store);
  const found = readHolder(lockPath);
  return found?.holder && found.holder.pid !== process.pid && isAlive(found.holder, lockPath) ? found.holder : undefined;
}

export interface StoreLock {
  readonly path: string;
  release(): void;
}

/**
 * Takes the store's lock for this process, or throws StoreInUseError naming
 * the live process that holds it. A lock whose holder has died is taken over.
 */
export function lockStore(store: string): StoreLock {
  const lockPath = lockPathOf(store);
  mkdirSync(dirname(lockPath), { recursive: true });
  const mine = JSON.stringify(me());
  // Written whole under another name, then linked into place: the lock never
  // exists half-written, and link() fails if another process holds it.
  const draft = `${lockPath}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(draft, mine, { mode: 0o644 });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(draft, lockPath);
        heldHere.set(lockPath, mine);
        return holding(lockPath);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const found = readHolder(lockPath);
      if (!found) continue; // released meanwhile
      if (found.holder && isAlive(found.holder, lockPath)) throw new StoreInUseError(resolve(store), found.holder);
      removeStale(lockPath, found.text);
    }
    throw new Error(`could not take the lock ${lockPath}: other processes keep taking it`);
  } finally {
    unlinkSync(draft);
  }
}

/**
 * Removes a dead holder's lock, but only that one: it is moved aside first
 * and checked, so that a lock another process took meanwhile is put back.
 */
function removeStale(lockPath: string, staleText: string): void {
  const aside = `${lockPath}.stale.${process.pid}`;
  try {
    renameSync(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    if (readFileSync(aside, 'utf8') !== staleText) linkSync(aside, lockPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(aside);
  }
}

/**
 * Records where one of this process's services listens, in every store lock it
 * holds (and those it takes later). Each lock is rewritten whole under another
 * name and renamed into place: a reader never sees it half-written.
 */
export function announceListening(service: keyof Listening, at: ListenAddress): void {
  listeningHere[service] = { host: at.host, port: at.port };
  for (const [lockPath, text] of heldHere) {
    const next = JSON.stringify({ ...(JSON.parse(text) as StoreHolder), listening: { ...listeningHere } });
    const draft = `${lockPath}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    try {
      if (readFileSync(lockPath, 'utf8') !== text) continue; // not ours any more: left alone
      writeFileSync(draft, next, { mode: 0o644 });
      renameSync(draft, lockPath);
      heldHere.set(lockPath, next);
    } catch {
      // The lock still names this process, without the ports: the doctor then checks the default ones.
      try {
        unlinkSync(draft);
      } catch {
        // not written
      }
    }
  }
}

function holding(lockPath: string): StoreLock {
  const release = () => {
    process.off('exit', release);
    const mine = heldHere.get(lockPath);
    if (!heldHere.delete(lockPath)) return;
    try {
      if (readFileSync(lockPath, 'utf8') === mine) unlinkSync(lockPath);
    } catch {
      // already gone
    }
  };
  // An exit without close() (an uncaught error) leaves no lock behind; a
  // kill -9 does, and the next process sees that its holder is gone.
  process.on('exit', release);
  return { path: lockPath, release };
}
