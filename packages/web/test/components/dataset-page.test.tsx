// @vitest-environment jsdom
// One dataset's page with no browser: its header and collections from the
// platform's answers, a retry that reads the collections and progress again,
// and paging that keeps the page shown until the next one has come.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { DatasetPage } from '../../src/datasets/DatasetPage';
import { fakeServer, renderWithQueries } from './fake-server';

const DETAIL = '/api/core/dataset/detail';
const TRAINING = '/api/core/dataset/trainingDetail';
const COLLECTIONS = '/api/core/dataset/collection/listV2';
const RETRY = '/api/core/dataset/training/retry';

const collection = (id: string, name: string) => ({ _id: id, name, type: 'file', trainingType: 'chunk', createTime: '2026-01-02T03:04:05Z', dataAmount: 4 });
const progressOf = (collectionId: string, p: Partial<{ failed: number; done: number; total: number; lastError: string | null }> = {}) => ({
  collectionId,
  queued: 0,
  indexing: 0,
  failed: 0,
  done: 4,
  total: 4,
  lastError: null,
  rateLimited: 0,
  rateLimitedUntil: null,
  timeLeftSeconds: null,
  job: null,
  ...p,
});
const sum = (collections: ReturnType<typeof progressOf>[]) => ({
  queued: 0,
  indexing: 0,
  failed: collections.reduce((n, c) => n + c.failed, 0),
  done: collections.reduce((n, c) => n + c.done, 0),
  total: collections.reduce((n, c) => n + c.total, 0),
  lastError: null,
  rateLimited: 0,
  rateLimitedUntil: null,
  timeLeftSeconds: null,
  deleting: 0,
  collections,
});

describe('a dataset page without a browser', () => {
  it('shows its header and its collections with their state, and a retry reads both again', async () => {
    const server = fakeServer();
    let broken = true;
    server.on('GET', DETAIL, () => ({ data: { _id: 'd1', id: 'd1', name: 'Handbook', vectorModel: { model: 'embed-small' } } }));
    server.on('GET', TRAINING, () => ({
      data: sum([progressOf('c1'), broken ? progressOf('c2', { failed: 2, done: 2, lastError: 'upstream said 500' }) : progressOf('c2')]),
    }));
    server.on('POST', COLLECTIONS, () => ({ data: { list: [collection('c1', 'guide.md'), collection('c2', 'faq.pdf')], total: 2 } }));
    server.on('POST', RETRY, () => {
      broken = false;
      return { data: null };
    });
    renderWithQueries(<DatasetPage datasetId="d1" />);

    expect(await screen.findByRole('heading', { name: 'Handbook' })).toBeTruthy();
    expect(await screen.findByText('2 collections')).toBeTruthy();
    const row = screen.getByRole('link', { name: 'faq.pdf' }).closest('tr')!;
    expect(within(row).getByText('upstream said 500')).toBeTruthy();
    const collectionReads = server.callsTo('POST', COLLECTIONS).length;
    const progressReads = server.callsTo('GET', TRAINING).length;

    fireEvent.click(within(row).getByRole('button', { name: 'Retry “faq.pdf”' }));
    await waitFor(() => expect(within(row).queryByText('upstream said 500')).toBeNull());
    expect(server.callsTo('POST', RETRY).map((c) => c.body)).toEqual([{ collectionId: 'c2' }]);
    // The change refreshed what it changed: the progress and the collections list, once each.
    expect(server.callsTo('GET', TRAINING).length).toBe(progressReads + 1);
    expect(server.callsTo('POST', COLLECTIONS).length).toBe(collectionReads + 1);
    // ... and not the dataset's own detail, which it does not change.
    expect(server.callsTo('GET', DETAIL)).toHaveLength(1);
  });

  it('keeps the page shown while the next page loads, then shows the next page', async () => {
    const server = fakeServer();
    server.on('GET', DETAIL, () => ({ data: { _id: 'd1', id: 'd1', name: 'Handbook', vectorModel: { model: 'embed-small' } } }));
    server.on('GET', TRAINING, () => ({ data: sum([]) }));
    server.on('POST', COLLECTIONS, (c) => (c.body.offset === 0 ? { data: { list: [collection('c1', 'first-page.md')], total: 25 } } : undefined));
    renderWithQueries(<DatasetPage datasetId="d1" />);
    await screen.findByRole('link', { name: 'first-page.md' });

    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    const next = await server.waitFor('POST', COLLECTIONS, (c) => c.body.offset === 20);
    // No "Loading…" flash between pages: the first page stays until the second has come.
    expect(screen.getByRole('link', { name: 'first-page.md' })).toBeTruthy();
    expect(screen.queryByText('Loading…')).toBeNull();
    next.reply({ list: [collection('c21', 'second-page.md')], total: 25 });
    await screen.findByRole('link', { name: 'second-page.md' });
    expect(screen.queryByRole('link', { name: 'first-page.md' })).toBeNull();
  });
});
