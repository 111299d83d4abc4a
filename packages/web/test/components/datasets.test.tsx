// @vitest-environment jsdom
// The datasets page with no browser: the list from the platform's answer, a
// search whose slow first answer must not stand for a later one, delete
// reading the list again, a failure with its Retry, and each card's indexing
// poll that stops once the work is done.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { DatasetsPage } from '../../src/datasets/DatasetsPage';
import { fakeServer, renderWithQueries, type FakeServer } from './fake-server';

const LIST = '/api/core/dataset/list';
const TRAINING = '/api/core/dataset/trainingDetail';
const MODELS = '/api/core/ai/model/list';

const dataset = (id: string, name: string) => ({ _id: id, id, name, vectorModel: { model: 'embed-small' }, collectionCount: 2, dataCount: 5 });
const progress = (p: Partial<{ queued: number; indexing: number; done: number; total: number }> = {}) => ({
  queued: 0,
  indexing: 0,
  failed: 0,
  done: 5,
  total: 5,
  lastError: null,
  rateLimited: 0,
  rateLimitedUntil: null,
  timeLeftSeconds: null,
  deleting: 0,
  collections: [],
  ...p,
});

/** The platform's other answers on this page: the models for the create form, each card's progress (done). */
function serve(server: FakeServer) {
  server.on('GET', MODELS, () => ({ data: { models: [], gateway: { reachable: true } } }));
  server.on('GET', TRAINING, () => ({ data: progress() }));
}

describe('the datasets page without a browser', () => {
  it('lists the knowledge bases the platform answers with, their model and size', async () => {
    const server = fakeServer();
    serve(server);
    server.on('POST', LIST, () => ({ data: [dataset('d1', 'Handbook'), dataset('d2', 'Release notes')] }));
    renderWithQueries(<DatasetsPage />);
    const card = (await screen.findByRole('link', { name: 'Handbook' })).closest('li')!;
    expect(within(card).getByText('embed-small')).toBeTruthy();
    expect(within(card).getByText('2 collections · 5 chunks')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Release notes' })).toBeTruthy();
    expect(await within(card).findByText('Indexed')).toBeTruthy();
  });

  it('shows the answer to the latest search, never a slower answer to an earlier one', async () => {
    const server = fakeServer();
    serve(server);
    server.on('POST', LIST, (c) => (c.body.searchKey === undefined ? { data: [] } : undefined));
    renderWithQueries(<DatasetsPage />);
    await screen.findByText('No knowledge bases yet.');
    const search = screen.getByRole('searchbox', { name: 'Search knowledge bases' });

    fireEvent.change(search, { target: { value: 'al' } });
    const first = await server.waitFor('POST', LIST, (c) => c.body.searchKey === 'al');
    fireEvent.change(search, { target: { value: 'alp' } });
    const second = await server.waitFor('POST', LIST, (c) => c.body.searchKey === 'alp');

    second.reply([dataset('d2', 'alpha')]);
    await screen.findByRole('link', { name: 'alpha' });
    // The first search's answer comes last: it must not replace the second's.
    first.reply([dataset('d1', 'alabama')]);
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByRole('link', { name: 'alabama' })).toBeNull();
    expect(screen.getByRole('link', { name: 'alpha' })).toBeTruthy();
    // Nobody reads the first search any more: its call was cancelled.
    expect(first.aborted).toBe(true);
  });

  it('reads the list again after a delete, without the deleted one', async () => {
    const server = fakeServer();
    serve(server);
    let list = [dataset('d1', 'Handbook'), dataset('d2', 'Old notes')];
    server.on('POST', LIST, () => ({ data: list }));
    server.on('DELETE', '/api/core/dataset/delete', (c) => {
      list = list.filter((d) => d._id !== c.query.get('id'));
      return { data: null };
    });
    renderWithQueries(<DatasetsPage />);
    await screen.findByRole('link', { name: 'Old notes' });
    const listCalls = server.callsTo('POST', LIST).length;

    fireEvent.click(screen.getByRole('button', { name: 'Delete “Old notes”' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, delete' }));
    await waitFor(() => expect(screen.queryByRole('link', { name: 'Old notes' })).toBeNull());
    expect(server.callsTo('DELETE', '/api/core/dataset/delete').map((c) => c.query.get('id'))).toEqual(['d2']);
    expect(server.callsTo('POST', LIST).length).toBe(listCalls + 1);
    expect(screen.getByRole('link', { name: 'Handbook' })).toBeTruthy();
  });

  it('shows a failure in place with Try again, which loads the list again', async () => {
    const server = fakeServer();
    serve(server);
    let fail = true;
    server.on('POST', LIST, () =>
      fail ? { json: { code: 500, statusText: '', message: 'database is down' }, status: 500 } : { data: [dataset('d1', 'Handbook')] },
    );
    renderWithQueries(<DatasetsPage />);
    const alert = await screen.findByText('database is down');
    expect(within(alert.closest('[role="alert"]') as HTMLElement).getByText('Something went wrong here')).toBeTruthy();
    // Failed once, tried once: no retry behind the reader's back.
    expect(server.callsTo('POST', LIST)).toHaveLength(1);

    fail = false;
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    await screen.findByRole('link', { name: 'Handbook' });
    expect(screen.queryByText('database is down')).toBeNull();
    expect(server.callsTo('POST', LIST)).toHaveLength(2);
  });

  it('offers no Try again for a refused request', async () => {
    const server = fakeServer();
    serve(server);
    server.on('POST', LIST, () => ({ json: { code: 400, statusText: '', message: "Invalid 'searchKey'" }, status: 400 }));
    renderWithQueries(<DatasetsPage />);
    await screen.findByText("Invalid 'searchKey'");
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
  });

  it("polls a card's indexing every 1.5 s while it is busy, and stops when it is done", async () => {
    const server = fakeServer();
    server.on('GET', MODELS, () => ({ data: { models: [], gateway: { reachable: true } } }));
    server.on('POST', LIST, () => ({ data: [dataset('d1', 'Handbook')] }));
    const answers = [progress({ queued: 3, done: 2 }), progress({ indexing: 1, done: 4 }), progress()];
    server.on('GET', TRAINING, () => ({ data: answers.shift() ?? progress() }));
    renderWithQueries(<DatasetsPage />);
    await screen.findByText('3 queued');
    await screen.findByText('Indexing', undefined, { timeout: 3000 });
    await screen.findByText('Indexed', undefined, { timeout: 3000 });
    expect(server.callsTo('GET', TRAINING)).toHaveLength(3);
    // Done: no more reads, however long the page stays open.
    await new Promise((r) => setTimeout(r, 3200));
    expect(server.callsTo('GET', TRAINING)).toHaveLength(3);
  }, 15_000);
});
