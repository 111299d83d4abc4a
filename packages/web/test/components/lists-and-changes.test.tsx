// @vitest-environment jsdom
// Lists that a change must refresh, with no browser: API keys (a create
// through its mutation), the chat history (a delete), and a checks run,
// polled every half second while it runs and not a moment after.
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { History } from '../../src/chat/History';
import { sessionTransport } from '../../src/chat/transport';
import { CheckRunPanel } from '../../src/datasets/CheckRun';
import KeysPage from '../../src/settings/KeysPage';
import { fakeServer, renderWithQueries } from './fake-server';

const key = (id: string, name: string) => ({ id, name, apiKey: `kb-…${id}`, appId: null, lastUsedTime: null, limit: { expiredTime: null } });

describe('lists and the changes that refresh them, without a browser', () => {
  it('creates a key, shows it once, and reads the key list again with it', async () => {
    const server = fakeServer();
    const keys = [key('k1', 'ci')];
    server.on('POST', '/api/core/app/list', () => ({ data: { list: [], total: 0 } }));
    server.on('GET', '/api/support/openapi/list', () => ({ data: keys }));
    server.on('POST', '/api/support/openapi/create', (c) => {
      keys.push(key('k2', c.body.name));
      return { data: 'kb-secret-new' };
    });
    renderWithQueries(<KeysPage />);
    await screen.findByText('ci');
    expect(server.callsTo('GET', '/api/support/openapi/list')).toHaveLength(1);

    fireEvent.change(screen.getByRole('textbox', { name: 'Key name' }), { target: { value: 'deploy bot' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create key' }));
    expect(await screen.findByText('kb-secret-new')).toBeTruthy();
    await screen.findByText('deploy bot');
    expect(server.callsTo('GET', '/api/support/openapi/list')).toHaveLength(2);
    expect(server.callsTo('POST', '/api/support/openapi/create').map((c) => c.body)).toEqual([{ name: 'deploy bot' }]);
  });

  it("shows a refused create in the platform's words, and leaves the list as it was", async () => {
    const server = fakeServer();
    server.on('POST', '/api/core/app/list', () => ({ data: { list: [], total: 0 } }));
    server.on('GET', '/api/support/openapi/list', () => ({ data: [key('k1', 'ci')] }));
    server.on('POST', '/api/support/openapi/create', () => ({ json: { code: 400, statusText: '', message: 'Too many keys' }, status: 400 }));
    renderWithQueries(<KeysPage />);
    await screen.findByText('ci');
    fireEvent.click(screen.getByRole('button', { name: 'Create key' }));
    expect(await screen.findByText('Too many keys')).toBeTruthy();
    expect(server.callsTo('GET', '/api/support/openapi/list')).toHaveLength(1);
  });

  it('lists the chats from the platform, and a delete reads the list again without it', async () => {
    const server = fakeServer();
    let chats = [
      { chatId: 'c1', title: 'About refunds', updateTime: '2026-01-02T00:00:00Z' },
      { chatId: 'c2', title: 'Shipping times', updateTime: '2026-01-01T00:00:00Z' },
    ];
    server.on('POST', '/api/core/chat/getHistories', () => ({ data: { list: chats, total: chats.length } }));
    server.on('DELETE', '/api/core/chat/delHistory', (c) => {
      chats = chats.filter((h) => h.chatId !== c.query.get('chatId'));
      return { data: null };
    });
    vi.stubGlobal('confirm', () => true);
    const onDeleted = vi.fn();
    renderWithQueries(<History transport={sessionTransport('app1')} current="c1" onOpen={() => {}} onDeleted={onDeleted} />);
    expect(await screen.findByRole('button', { name: 'About refunds' })).toBeTruthy();
    expect(server.callsTo('POST', '/api/core/chat/getHistories')[0]!.body).toMatchObject({ appId: 'app1', offset: 0, pageSize: 30 });

    fireEvent.click(screen.getByRole('button', { name: 'Delete chat Shipping times' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Shipping times' })).toBeNull());
    expect(server.callsTo('POST', '/api/core/chat/getHistories')).toHaveLength(2);
    expect(onDeleted).toHaveBeenCalledWith('c2');
  });

  it('goes back a page when the last chat of a later one is deleted, read afresh: never the old count', async () => {
    const server = fakeServer();
    let chats = Array.from({ length: 31 }, (_, i) => ({ chatId: `c${i}`, title: `Chat ${i}`, updateTime: '2026-01-01T00:00:00Z' }));
    let held = false; // after the delete, the page before waits for the test's answer
    server.on('POST', '/api/core/chat/getHistories', (c) =>
      held ? undefined : { data: { list: chats.slice(c.body.offset, c.body.offset + c.body.pageSize), total: chats.length } },
    );
    server.on('DELETE', '/api/core/chat/delHistory', (c) => {
      chats = chats.filter((h) => h.chatId !== c.query.get('chatId'));
      held = true;
      return { data: null };
    });
    vi.stubGlobal('confirm', () => true);
    renderWithQueries(<History transport={sessionTransport('app1')} current="c0" onOpen={() => {}} onDeleted={() => {}} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Next' }, { timeout: 5000 }));
    fireEvent.click(await screen.findByRole('button', { name: 'Delete chat Chat 30' }, { timeout: 5000 }));

    // Page 1 is read again before it shows: its cached copy (31 chats, a Next) never does.
    await waitFor(() => expect(server.callsTo('POST', '/api/core/chat/getHistories').filter((c) => !c.settled)).toHaveLength(1), { timeout: 5000 });
    expect(screen.queryByText('Page 1 of 2')).toBeNull();
    server
      .callsTo('POST', '/api/core/chat/getHistories')
      .find((c) => !c.settled)!
      .reply({ list: chats.slice(0, 30), total: 30 });
    expect(await screen.findByRole('button', { name: 'Chat 0' }, { timeout: 5000 })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Next' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Chat 30' })).toBeNull();
  });

  it('polls a running checks run every 500 ms, stops when it is done, and says so once', async () => {
    const server = fakeServer();
    const run = (status: string, done: number) => ({
      run: {
        id: 'r1',
        status,
        done,
        total: 3,
        passed: done,
        startedAt: '2026-01-02T03:04:05Z',
        vectorModel: 'embed-small',
        chunking: { chunks: 9, collections: 2, pending: 0 },
      },
      diff: null,
    });
    const answers = [run('running', 1), run('running', 2), run('done', 3)];
    server.on('GET', '/api/core/dataset/check/run', (c) => ({ data: c.query.has('datasetId') ? run('running', 0) : (answers.shift() ?? run('done', 3)) }));
    const onRan = vi.fn();
    renderWithQueries(<CheckRunPanel datasetId="d1" count={3} onRan={onRan} />);
    expect(await screen.findByText(/Running \d of 3…/)).toBeTruthy();
    await screen.findByText(/3 of 3 pass/, undefined, { timeout: 3000 });
    const polls = () => server.callsTo('GET', '/api/core/dataset/check/run').filter((c) => c.query.get('id') === 'r1').length;
    expect(polls()).toBe(3);
    await waitFor(() => expect(onRan).toHaveBeenCalledTimes(1));
    await new Promise((r) => setTimeout(r, 1200));
    expect(polls()).toBe(3);
    expect(onRan).toHaveBeenCalledTimes(1);
  });
});
