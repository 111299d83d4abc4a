// The embedded store's lock, with real processes: a live holder is named and
// refused, a holder killed with -9 blocks nobody, a pid now used by another
// process is not taken for the holder, and both ways of opening PGlite lock.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openPGlite } from '../src/pglite.js';
import { PGliteThread } from '../src/pglite-thread.js';
import { announceListening, lockStore, storeHolder, StoreInUseError } from '../src/store-lock.js';

const LOCK_MODULE = new URL('../dist/store-lock.js', import.meta.url).href;
const children: ChildProcess[] = [];

/** Another process that takes the store's lock and keeps running. */
async function holderProcess(store: string): Promise<ChildProcess> {
  const code = `import { lockStore } from ${JSON.stringify(LOCK_MODULE)}; lockStore(process.argv[1]); console.log('locked'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, store], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => String(d).includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return child;
}

const killed = (child: ChildProcess) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGKILL')));

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

describe('embedded store lock', () => {
  it('refuses a second process at once, naming the holder, and gives the store back on release', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'kbchat-lock-')), 'gateway-db');
    const lock = lockStore(store);
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', `import { lockStore } from ${JSON.stringify(LOCK_MODULE)}; lockStore(process.argv[1]);`, store],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain(`the embedded store ${store} is in use by process ${process.pid}`);
    expect(stderr).toMatch(/started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    lock.release();
    expect(existsSync(`${store}.lock`)).toBe(false);
    lockStore(store).release();
  });

  it('a holder killed with -9 blocks nobody; a live one is named by storeHolder', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'kbchat-lock-')), 'platform-db');
    const child = await holderProcess(store);
    expect(storeHolder(store)?.pid).toBe(child.pid);
    expect(() => lockStore(store)).toThrow(StoreInUseError);
    await killed(child);
    expect(storeHolder(store)).toBeUndefined();
    const lock = lockStore(store);
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('a pid now used by another process is not taken for the dead holder (Linux)', async () => {
    if (!existsSync('/proc/self/stat')) return;
    const store = join(mkdtempSync(join(tmpdir(), 'kbchat-lock-')), 'db');
    const live = await holderProcess(join(store, 'other'));
    // A lock written by an earlier process that had the live child's pid, and by one that had ours.
    for (const pid of [live.pid!, process.pid]) {
      writeFileSync(
        `${store}.lock`,
        JSON.stringify({
          pid,
          hostname: (await import('node:os')).hostname(),
          command: 'node old',
          startedAt: new Date(0).toISOString(),
          processId: 'another-boot:1',
        }),
      );
      expect(storeHolder(store)).toBeUndefined();
      lockStore(store).release();
    }
  });

  it('one process cannot open one store twice either', () => {
    const store = join(mkdtempSync(join(tmpdir(), 'kbchat-lock-')), 'db');
    const lock = lockStore(store);
    expect(() => lockStore(store)).toThrow(/in use by process/);
    lock.release();
  });

  it('says where the holder listens, in the locks it holds and those it takes later, and still releases them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-lock-'));
    const code = [
      `import { announceListening, lockStore } from ${JSON.stringify(LOCK_MODULE)};`,
      `lockStore(process.argv[1] + '/gateway-db');`,
      `announceListening('gateway', { host: '127.0.0.1', port: 43101 });`,
      `lockStore(process.argv[1] + '/platform-db');`,
      `announceListening('platform', { host: '0.0.0.0', port: 43100 });`,
      `console.log('locked'); setInterval(() => {}, 1000);`,
    ].join(' ');
    const child = spawn(process.execPath, ['--input-type=module', '-e', code, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => String(d).includes('locked') && resolve());
      child.once('exit', (c) => reject(new Error(`the holder exited with ${c}`)));
    });
    const both = { gateway: { host: '127.0.0.1', port: 43101 }, platform: { host: '0.0.0.0', port: 43100 } };
    expect(storeHolder(join(dir, 'gateway-db'))).toMatchObject({ pid: child.pid, listening: both });
    expect(storeHolder(join(dir, 'platform-db'))).toMatchObject({ pid: child.pid, listening: both });

    // Here: a lock rewritten with the address is still this process's, released on release().
    const store = join(dir, 'here-db');
    const lock = lockStore(store);
    announceListening('gateway', { host: '127.0.0.1', port: 43201 });
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid, listening: { gateway: { port: 43201 } } });
    expect(() => lockStore(store)).toThrow(StoreInUseError);
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
  });

  it('openPGlite and PGliteThread hold the lock until close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-lock-'));
    const pg = await openPGlite(join(dir, 'platform-db'));
    await expect(openPGlite(join(dir, 'platform-db'))).rejects.toThrow(StoreInUseError);
    await pg.close();
    const thread = await PGliteThread.open(join(dir, 'platform-db'));
    await expect(PGliteThread.open(join(dir, 'platform-db'))).rejects.toThrow(StoreInUseError);
    await thread.close();
    expect(existsSync(join(dir, 'platform-db.lock'))).toBe(false);
  }, 60_000);
});
