// kbchat doctor's store checks against the machine's real servers (each gets a
// fresh database, dropped afterwards; an absent server skips, saying why), and
// its table's colour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testStore, type TestStore } from '../../gateway/test/stores.js';
import { doctorOptions } from '../src/doctor/options.js';
import { toTable } from '../src/doctor/report.js';
import { storeChecks } from '../src/doctor/stores.js';

const optionsFor = (gatewayUrl: string | undefined, platformUrl: string | undefined) =>
  doctorOptions({ DATA_DIR: '/nonexistent-kbchat-doctor', GATEWAY_DATABASE_URL: gatewayUrl, DATABASE_URL: platformUrl }, {});

/** The URL with another user and password: the server refuses it. */
function withUser(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  return u.toString();
}

describe.each(['postgres', 'mysql'] as const)('kbchat doctor on a %s store', (kind) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await testStore(kind);
    if (store.skipReason) console.warn(`skipped: ${store.skipReason}`);
  });
  afterAll(() => store?.drop());

  it('reaches the store, and names what is wrong with a URL the server refuses, never its password', async (ctx) => {
    if (!store.url) return ctx.skip();
    const [gateway] = await storeChecks(optionsFor(store.url, undefined));
    expect(gateway).toMatchObject({ name: 'gateway store', status: 'ok' });
    expect(gateway!.detail).toMatch(kind === 'postgres' ? /^PostgreSQL \d+/ : /^MySQL\/MariaDB \d+/);

    const refused = withUser(store.url, 'kbchat_doctor_nobody', 'not-the-password-0123');
    const [bad] = await storeChecks(optionsFor(refused, undefined));
    expect(bad).toMatchObject({ status: 'fail', remedy: 'the server refuses the user or password in GATEWAY_DATABASE_URL: correct them' });
    expect(JSON.stringify(bad)).not.toContain('not-the-password-0123');

    const missing = new URL(store.url);
    missing.pathname = '/kbchat_doctor_no_such_db';
    const [none] = await storeChecks(optionsFor(missing.toString(), undefined));
    expect(none).toMatchObject({ status: 'fail', remedy: 'the database in GATEWAY_DATABASE_URL does not exist: create it (CREATE DATABASE ...)' });
  });

  it.runIf(kind === 'postgres')('checks the platform store for pgvector', async (ctx) => {
    if (!store.url) return ctx.skip();
    const [, platform] = await storeChecks(optionsFor(undefined, store.url));
    expect(platform!.name).toBe('platform store');
    // The machine's PostgreSQL either has pgvector (the platform's tests need it) or the check says how to get it.
    if (platform!.status === 'ok') expect(platform!.detail).toMatch(/with pgvector/);
    else expect(platform!.remedy).toMatch(/pgvector/);
  });
});

it('says a server that is not there is down, naming the variable', async () => {
  const [, platform] = await storeChecks(optionsFor(undefined, 'postgres://kbchat:secret-pw@127.0.0.1:9/kbchat'));
  expect(platform).toMatchObject({
    status: 'fail',
    remedy: 'nothing answers at 127.0.0.1:9: start the database server (docker compose up -d), or correct DATABASE_URL',
  });
  expect(platform!.detail).toContain('postgres://kbchat:***@127.0.0.1:9/kbchat');
  expect(platform!.detail).not.toContain('secret-pw');
});

it('colours the status words only when asked', () => {
  const checks = [
    { name: 'gateway', status: 'ok' as const, detail: 'fine' },
    { name: 'upstream', model: 'm', status: 'fail' as const, detail: 'bad', remedy: 'do this' },
  ];
  const plain = toTable(checks, false);
  expect(plain).not.toContain('\x1b[');
  expect(plain.split('\n').filter((l) => /^(OK|FAIL) /.test(l))).toHaveLength(2);
  const coloured = toTable(checks, true);
  expect(coloured).toContain('\x1b[32mOK    \x1b[0m');
  expect(coloured).toContain('\x1b[31mFAIL  \x1b[0m');
});
