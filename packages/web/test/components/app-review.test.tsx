// @vitest-environment jsdom
// The pages that review an application's answers, with no browser: the
// annotations (their reply setting, search, delete, import and the
// platform's refusals), the chat log's filters and export links, "Improve
// this answer" on an opened chat, and the figures.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppStats, PublicAnnotation, PublicChatItem, PublicChatLog } from '../../src/api';
import { AnnotationsPage } from '../../src/apps/Annotations';
import { AppStatsPage } from '../../src/apps/AppStats';
import { ChatLogsPage } from '../../src/apps/ChatLogs';
import { fakeServer, renderWithQueries, type FakeServer } from './fake-server';

const DETAIL = '/api/core/app/detail';
const UPDATE = '/api/core/app/update';
const LIST = '/api/core/app/annotation/list';
const CREATE = '/api/core/app/annotation/create';
const DELETE = '/api/core/app/annotation/delete';
const IMPORT = '/api/core/app/annotation/import';
const LOGS = '/api/core/app/getChatLogs';
const RECORDS = '/api/core/chat/getPaginationRecords';
const STATS = '/api/core/app/stats';

const annotation = (id: string, question: string, answer = `Answer to ${question}`): PublicAnnotation => ({
  _id: id,
  id,
  appId: 'app1',
  question,
  answer,
  hitCount: 0,
  createTime: '2026-01-02T03:04:05Z',
  updateTime: '2026-01-02T03:04:05Z',
});

/** The application, as the platform holds it: a PUT /api/core/app/update changes what the next detail reads. */
function serveApp(server: FakeServer, annotationReply = { enabled: false, similarity: 0.9 }) {
  const app = { _id: 'app1', id: 'app1', name: 'Support bot', annotationReply };
  server.on('GET', DETAIL, () => ({ data: app }));
  server.on('PUT', UPDATE, (c) => {
    Object.assign(app, c.body);
    return { data: app };
  });
  return app;
}

/** The annotations the platform holds, searched and paged as it does. */
function serveAnnotations(server: FakeServer, all: PublicAnnotation[]) {
  server.on('GET', LIST, (c) => {
    const text = c.query.get('searchText')?.toLowerCase();
    const found = text ? all.filter((a) => a.question.toLowerCase().includes(text)) : all;
    const offset = Number(c.query.get('offset'));
    return { data: { list: found.slice(offset, offset + Number(c.query.get('pageSize'))), total: found.length } };
  });
}

const listQueries = (server: FakeServer) =>
  server.callsTo('GET', LIST).map((c) => ({ offset: c.query.get('offset'), searchText: c.query.get('searchText'), pageSize: c.query.get('pageSize') }));

describe('the annotations page without a browser', () => {
  it('shows its loading state, then the list; a search sends its text and starts again at the first page', async () => {
    const server = fakeServer();
    serveApp(server);
    const all = Array.from({ length: 25 }, (_, i) => annotation(`a${i}`, `Question ${i}`));
    all[24] = annotation('a24', 'How do refunds work?');
    renderWithQueries(<AnnotationsPage appId="app1" />);

    const first = await server.waitFor('GET', LIST);
    expect(first.query.get('appId')).toBe('app1');
    // The app has come (its title and setting show), the list has not: its own loading state.
    expect(await screen.findByRole('heading', { name: 'Annotations' })).toBeTruthy();
    expect(screen.getByRole('form', { name: 'Annotation reply' })).toBeTruthy();
    expect(screen.getByText('Loading…')).toBeTruthy();
    first.reply({ list: all.slice(0, 20), total: 25 });
    const list = await screen.findByRole('list', { name: 'Annotations' });
    expect(within(list).getAllByRole('article')).toHaveLength(20);
    expect(screen.getByRole('article', { name: 'Question 0' })).toBeTruthy();
    expect(screen.getByText('25 annotations')).toBeTruthy();
    expect(screen.queryByText('Loading…')).toBeNull();

    serveAnnotations(server, all);
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByRole('article', { name: 'How do refunds work?' })).toBeTruthy();
    expect(listQueries(server).at(-1)).toEqual({ offset: '20', searchText: null, pageSize: '20' });

    fireEvent.change(screen.getByRole('searchbox', { name: 'Search the annotations' }), { target: { value: '  refunds ' } });
    await waitFor(() => expect(listQueries(server).at(-1)).toEqual({ offset: '0', searchText: 'refunds', pageSize: '20' }));
    await screen.findByText('1 annotation');
    expect(screen.getAllByRole('article').map((a) => a.getAttribute('aria-label'))).toEqual(['How do refunds work?']);
    expect(screen.queryByRole('button', { name: 'Next' })).toBeNull();

    fireEvent.change(screen.getByRole('searchbox', { name: 'Search the annotations' }), { target: { value: 'nothing like it' } });
    expect(await screen.findByText('No annotation matches.')).toBeTruthy();
  });

  it('saves annotation reply with the app, and shows what the platform then holds', async () => {
    const server = fakeServer();
    serveApp(server);
    serveAnnotations(server, []);
    renderWithQueries(<AnnotationsPage appId="app1" />);
    const form = await screen.findByRole('form', { name: 'Annotation reply' });
    const save = within(form).getByRole('button', { name: 'Save' }) as HTMLButtonElement;
    // Nothing changed yet: nothing to save.
    expect(save.disabled).toBe(true);

    fireEvent.click(within(form).getByRole('checkbox', { name: 'Answer from annotations' }));
    fireEvent.change(within(form).getByRole('spinbutton', { name: 'Minimum similarity' }), { target: { value: '0.75' } });
    expect(save.disabled).toBe(false);
    const reads = server.callsTo('GET', DETAIL).length;
    fireEvent.click(save);

    expect(await within(form).findByRole('status')).toHaveProperty('textContent', 'Saved.');
    expect(server.callsTo('PUT', UPDATE).map((c) => c.body)).toEqual([{ appId: 'app1', annotationReply: { enabled: true, similarity: 0.75 } }]);
    // "Saved" is the app read again, the form showing it.
    expect(server.callsTo('GET', DETAIL)).toHaveLength(reads + 1);
    expect((within(form).getByRole('checkbox', { name: 'Answer from annotations' }) as HTMLInputElement).checked).toBe(true);
    expect((within(form).getByRole('spinbutton', { name: 'Minimum similarity' }) as HTMLInputElement).value).toBe('0.75');
    expect(save.disabled).toBe(true);
  });

  it('refuses a similarity outside 0 to 1 in the form: nothing is sent', async () => {
    const server = fakeServer();
    serveApp(server);
    serveAnnotations(server, []);
    renderWithQueries(<AnnotationsPage appId="app1" />);
    const form = await screen.findByRole('form', { name: 'Annotation reply' });
    const save = within(form).getByRole('button', { name: 'Save' }) as HTMLButtonElement;
    const similarity = within(form).getByRole('spinbutton', { name: 'Minimum similarity' });

    for (const value of ['1.5', '-0.1', '']) {
      fireEvent.change(similarity, { target: { value } });
      expect(save.disabled).toBe(true);
      // The field says why, and is marked invalid.
      expect(within(form).getByRole('alert').textContent).toBe('Minimum similarity must be a number from 0 to 1.');
      expect(similarity.getAttribute('aria-invalid')).toBe('true');
      // Enter in the field submits the form whatever the button says: still nothing goes.
      fireEvent.submit(form);
    }
    fireEvent.change(similarity, { target: { value: '1' } });
    expect(save.disabled).toBe(false);
    expect(within(form).queryByRole('alert')).toBeNull();
    expect(server.callsTo('PUT', UPDATE)).toHaveLength(0);
  });

  it('asks before a delete, then deletes by id and reads the list again without it', async () => {
    const server = fakeServer();
    serveApp(server);
    let all = [annotation('a1', 'Opening hours?'), annotation('a2', 'Refund policy?')];
    serveAnnotations(server, all);
    server.on('DELETE', DELETE, (c) => {
      all = all.filter((a) => a.id !== c.query.get('id'));
      serveAnnotations(server, all);
      return { data: null };
    });
    renderWithQueries(<AnnotationsPage appId="app1" />);
    await screen.findByRole('article', { name: 'Refund policy?' });

    fireEvent.click(screen.getByRole('button', { name: 'Delete “Refund policy?”' }));
    const ask = screen.getByRole('group', { name: 'Delete “Refund policy?”' });
    expect(within(ask).getByText('Delete “Refund policy?”? This cannot be undone.')).toBeTruthy();
    expect(server.callsTo('DELETE', DELETE)).toHaveLength(0);
    // Cancel asks nothing of the platform.
    fireEvent.click(within(ask).getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('DELETE', DELETE)).toHaveLength(0);

    fireEvent.click(screen.getByRole('button', { name: 'Delete “Refund policy?”' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, delete' }));
    await waitFor(() => expect(screen.queryByRole('article', { name: 'Refund policy?' })).toBeNull());
    expect(server.callsTo('DELETE', DELETE).map((c) => c.url)).toEqual(['/api/core/app/annotation/delete?id=a2']);
    expect(screen.getByRole('article', { name: 'Opening hours?' })).toBeTruthy();
    expect(server.callsTo('GET', LIST)).toHaveLength(2);
  });

  it('imports a CSV file and shows how many it made and why each skipped row was left out', async () => {
    const server = fakeServer();
    serveApp(server);
    serveAnnotations(server, []);
    const csv = 'question,answer\nOpening hours?,9 to 5\nOpening hours?,again\n,no question\n';
    server.on('POST', IMPORT, () => {
      serveAnnotations(server, [annotation('a1', 'Opening hours?', '9 to 5')]);
      return {
        data: {
          created: 1,
          skipped: [
            { row: 3, reason: 'a question already there' },
            { row: 4, reason: 'an empty question' },
          ],
        },
      };
    });
    renderWithQueries(<AnnotationsPage appId="app1" />);
    expect(await screen.findByText('No annotations yet.')).toBeTruthy();

    fireEvent.change(screen.getByLabelText('Import from CSV'), { target: { files: [new File([csv], 'faq.csv', { type: 'text/csv' })] } });
    const result = await screen.findByRole('status');
    expect(within(result).getByText('Imported 1 annotation; 2 rows skipped.')).toBeTruthy();
    expect(
      within(result)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['Row 3: a question already there', 'Row 4: an empty question']);
    expect(server.callsTo('POST', IMPORT).map((c) => c.body)).toEqual([{ appId: 'app1', csv }]);
    // What it made shows in the list, read again.
    expect(await screen.findByRole('article', { name: 'Opening hours?' })).toBeTruthy();

    fireEvent.click(within(result).getByRole('button', { name: 'Close' }));
    expect(screen.queryByText('Imported 1 annotation; 2 rows skipped.')).toBeNull();
  });

  it("shows the platform's refusals in its words, and keeps what was typed", async () => {
    const server = fakeServer();
    serveApp(server);
    serveAnnotations(server, [annotation('a1', 'Opening hours?')]);
    server.on('POST', CREATE, () => ({ json: { code: 400, statusText: 'invalid_body', message: 'answer: too long' }, status: 400 }));
    server.on('POST', IMPORT, () => ({ json: { code: 400, statusText: 'invalid_csv', message: 'The file has no question,answer rows' }, status: 400 }));
    server.on('DELETE', DELETE, () => ({ json: { code: 404, statusText: 'not_found', message: 'No such annotation' }, status: 404 }));
    renderWithQueries(<AnnotationsPage appId="app1" />);
    await screen.findByRole('article', { name: 'Opening hours?' });

    fireEvent.click(screen.getByRole('button', { name: 'Add an annotation' }));
    const form = screen.getByRole('form', { name: 'New annotation' });
    fireEvent.change(within(form).getByRole('textbox', { name: 'Question' }), { target: { value: 'Where are you?' } });
    fireEvent.change(within(form).getByRole('textbox', { name: 'Answer' }), { target: { value: 'In Lyon.' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('answer: too long');
    expect((within(form).getByRole('textbox', { name: 'Question' }) as HTMLTextAreaElement).value).toBe('Where are you?');
    expect(server.callsTo('POST', CREATE).map((c) => c.body)).toEqual([{ appId: 'app1', question: 'Where are you?', answer: 'In Lyon.' }]);

    fireEvent.change(screen.getByLabelText('Import from CSV'), { target: { files: [new File(['x'], 'bad.csv')] } });
    expect(await screen.findByText('The file has no question,answer rows')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Delete “Opening hours?”' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, delete' }));
    expect(await screen.findByText('No such annotation')).toBeTruthy();
    expect(screen.getByRole('article', { name: 'Opening hours?' })).toBeTruthy();
  });
});

const chatLog = (chatId: string, title: string): PublicChatLog => ({
  _id: chatId,
  id: chatId,
  chatId,
  title,
  source: 'online',
  messageCount: 2,
  userGoodFeedbackCount: 0,
  userBadFeedbackCount: 1,
  createTime: '2026-01-02T03:04:05Z',
  updateTime: '2026-01-02T03:04:05Z',
});

/** The filters of the last getChatLogs call, with its offset: what the list asked for. */
const lastLogsBody = (server: FakeServer) => {
  const { appId, pageSize, ...rest } = server.callsTo('POST', LOGS).at(-1)!.body;
  expect({ appId, pageSize }).toEqual({ appId: 'app1', pageSize: 20 });
  return rest;
};
const exportQuery = (name: string) => {
  const href = screen.getByRole('link', { name }).getAttribute('href')!;
  expect(new URL(href, 'http://localhost').pathname).toBe('/api/core/app/exportChatLogs');
  return Object.fromEntries(new URL(href, 'http://localhost').searchParams);
};

describe('the chat log without a browser', () => {
  it('sends each filter to getChatLogs from the first page, gives the export links the same ones, and clears them', async () => {
    const server = fakeServer();
    serveApp(server);
    server.on('GET', '/api/support/outLink/list', () => ({
      data: [{ _id: 's1', id: 's1', shareId: 'share1', appId: 'app1', name: 'Website', createTime: '', limit: {} }],
    }));
    server.on('POST', LOGS, (c) => ({ data: { list: [chatLog(`c${c.body.offset}`, `Chat from ${c.body.offset}`)], total: 45 } }));
    renderWithQueries(<ChatLogsPage appId="app1" />);
    await screen.findByRole('button', { name: 'Chat from 0' });
    expect(lastLogsBody(server)).toEqual({ offset: 0 });
    expect(exportQuery('Export CSV')).toEqual({ appId: 'app1', format: 'csv' });
    expect(screen.queryByRole('button', { name: 'Clear filters' })).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    await screen.findByRole('button', { name: 'Chat from 20' });
    expect(lastLogsBody(server)).toEqual({ offset: 20 });

    // A filter goes back to the first page.
    fireEvent.change(screen.getByRole('combobox', { name: 'Feedback' }), { target: { value: 'bad' } });
    await screen.findByRole('button', { name: 'Chat from 0' });
    expect(lastLogsBody(server)).toEqual({ offset: 0, feedback: 'bad' });

    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    await screen.findByRole('button', { name: 'Chat from 20' });
    fireEvent.change(screen.getByRole('combobox', { name: 'From' }), { target: { value: 'share' } });
    await screen.findByRole('button', { name: 'Chat from 0' });
    expect(lastLogsBody(server)).toEqual({ offset: 0, feedback: 'bad', source: 'share' });

    fireEvent.change(await screen.findByRole('combobox', { name: 'Share link' }), { target: { value: 'share1' } });
    await waitFor(() => expect(lastLogsBody(server)).toEqual({ offset: 0, feedback: 'bad', source: 'share', shareId: 'share1' }));

    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    await screen.findByRole('button', { name: 'Chat from 20' });
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search the chats' }), { target: { value: ' refund ' } });
    const filters = { feedback: 'bad', source: 'share', shareId: 'share1', searchText: 'refund' };
    await waitFor(() => expect(lastLogsBody(server)).toEqual({ offset: 0, ...filters }));
    await screen.findByRole('button', { name: 'Chat from 0' });
    expect(exportQuery('Export CSV')).toEqual({ appId: 'app1', format: 'csv', ...filters });
    expect(exportQuery('Export JSON Lines')).toEqual({ appId: 'app1', format: 'jsonl', ...filters });

    const reads = server.callsTo('POST', LOGS).length;
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(server.callsTo('POST', LOGS).length).toBeGreaterThan(reads));
    await waitFor(() => expect(lastLogsBody(server)).toEqual({ offset: 0 }));
    expect((screen.getByRole('combobox', { name: 'Feedback' }) as HTMLSelectElement).value).toBe('all');
    expect((screen.getByRole('combobox', { name: 'From' }) as HTMLSelectElement).value).toBe('');
    expect((screen.getByRole('searchbox', { name: 'Search the chats' }) as HTMLInputElement).value).toBe('');
    expect(exportQuery('Export CSV')).toEqual({ appId: 'app1', format: 'csv' });
    expect(screen.queryByRole('button', { name: 'Clear filters' })).toBeNull();
  });

  it('says when no chat matches the filters', async () => {
    const server = fakeServer();
    serveApp(server);
    server.on('GET', '/api/support/outLink/list', () => ({ data: [] }));
    server.on('POST', LOGS, (c) => ({ data: c.body.feedback ? { list: [], total: 0 } : { list: [chatLog('c1', 'About refunds')], total: 1 } }));
    renderWithQueries(<ChatLogsPage appId="app1" />);
    await screen.findByRole('button', { name: 'About refunds' });
    fireEvent.change(screen.getByRole('combobox', { name: 'Feedback' }), { target: { value: 'good' } });
    expect(await screen.findByText('No chat matches these filters.')).toBeTruthy();
    expect(lastLogsBody(server)).toEqual({ offset: 0, feedback: 'good' });
  });
});

const item = (dataId: string, obj: 'Human' | 'AI', text: string, extra: Partial<PublicChatItem> = {}): PublicChatItem => ({
  _id: dataId,
  dataId,
  obj,
  value: [{ type: 'text', text: { content: text } }],
  status: 'done',
  time: '2026-01-02T03:04:05Z',
  ...extra,
});

describe('"Improve this answer" on an opened chat', () => {
  it('opens the form with the question and the answer, saves an annotation tied to the answer, and shows it', async () => {
    const server = fakeServer();
    serveApp(server);
    server.on('GET', '/api/support/outLink/list', () => ({ data: [] }));
    server.on('POST', LOGS, () => ({ data: { list: [chatLog('chat1', 'About refunds')], total: 1 } }));
    let annotated: PublicChatItem['annotation'];
    server.on('POST', RECORDS, () => ({
      data: {
        list: [
          item('q1', 'Human', 'How long do refunds take?'),
          item('d1', 'AI', 'I do not know.', { userBadFeedback: 'yes', ...(annotated ? { annotation: annotated } : {}) }),
        ],
        total: 2,
      },
    }));
    server.on('POST', CREATE, (c) => {
      annotated = { id: 'an1', question: c.body.question, answer: c.body.answer };
      return { data: 'an1' };
    });
    renderWithQueries(<ChatLogsPage appId="app1" />);
    fireEvent.click(await screen.findByRole('button', { name: 'About refunds' }));
    const answer = await screen.findByTestId('answer');
    expect(within(answer).getByText('I do not know.')).toBeTruthy();
    expect(server.callsTo('POST', RECORDS).map((c) => c.body)).toEqual([{ appId: 'app1', chatId: 'chat1', pageSize: 500 }]);
    expect(within(answer).getByText('Judged not helpful')).toBeTruthy();
    expect(within(answer).queryByText('Annotated')).toBeNull();

    fireEvent.click(within(answer).getByRole('button', { name: 'Improve this answer' }));
    const form = within(answer).getByRole('form', { name: 'Improve this answer' });
    const question = within(form).getByRole('textbox', { name: 'Question' }) as HTMLTextAreaElement;
    const better = within(form).getByRole('textbox', { name: 'Answer' }) as HTMLTextAreaElement;
    expect(question.value).toBe('How long do refunds take?');
    expect(better.value).toBe('I do not know.');

    fireEvent.change(better, { target: { value: 'Refunds take five working days.' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(within(answer).queryByRole('form')).toBeNull());
    expect(server.callsTo('POST', CREATE).map((c) => c.body)).toEqual([
      { appId: 'app1', chatId: 'chat1', dataId: 'd1', question: 'How long do refunds take?', answer: 'Refunds take five working days.' },
    ]);
    // Shown once the platform has it: the chat's records read again, with the annotation.
    expect(server.callsTo('POST', RECORDS)).toHaveLength(2);
    const review = within(answer).getByTestId('answer-review');
    expect(within(review).getByText('Annotated')).toBeTruthy();
    expect(within(review).getByText('Refunds take five working days.')).toBeTruthy();
    expect(within(review).getByRole('button', { name: 'Edit the annotation' })).toBeTruthy();
    expect(within(review).queryByRole('button', { name: 'Improve this answer' })).toBeNull();
  });
});

const figures = {
  chats: 12,
  questions: 1234,
  visitors: 5,
  goodFeedback: 7,
  badFeedback: 3,
  annotationAnswers: 4,
  uncitedAnswers: 2,
  tokens: 56789,
  cost: 0.0125,
  ttftP50Ms: 812.34,
  ttftP95Ms: null,
};
const stats = (bucket: 'hour' | 'day'): AppStats => ({
  bucket,
  from: '2026-01-01T00:00:00.000Z',
  to: '2026-01-08T00:00:00.000Z',
  // No buckets: a line would need Path2D too, and the lines are not checked here.
  buckets: [],
  totals: figures,
});

/**
 * What uPlot needs of a browser that jsdom has not got: matchMedia (read when
 * uPlot loads), ResizeObserver, and a canvas to draw on (here one that draws
 * nothing). Without them the first chart throws, and the page's boundary
 * replaces the whole page, totals included. What the charts draw is not
 * checked here (the Chromium tests see it); that they are there is.
 */
function chartsCanRender() {
  vi.stubGlobal('matchMedia', (media: string) => ({ matches: false, media, addEventListener() {}, removeEventListener() {} }));
  vi.stubGlobal(
    'ResizeObserver',
    class {
      observe() {}
      disconnect() {}
    },
  );
  const held: Record<PropertyKey, unknown> = {};
  const context = new Proxy(held, {
    get: (_, k) => (k in held ? held[k] : () => ({ width: 0 })),
    set: (_, k, v) => ((held[k] = v), true),
  });
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(() => context as unknown as CanvasRenderingContext2D);
}

describe('the figures page without a browser', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('shows the totals of the stats answer beside its charts, and asks per hour when told', async () => {
    const server = fakeServer();
    chartsCanRender();
    serveApp(server);
    server.on('GET', STATS, (c) => ({ data: stats(c.query.get('bucket') as 'hour' | 'day') }));
    renderWithQueries(<AppStatsPage appId="app1" />);
    // The charts load lazily: once they are there, the totals still are.
    await waitFor(() => expect(screen.getAllByRole('figure')).toHaveLength(5));
    expect(screen.getByRole('figure', { name: 'Questions and chats' })).toBeTruthy();
    expect(screen.getByRole('figure', { name: 'Time to first text' })).toBeTruthy();
    const totals = screen.getByRole('region', { name: 'Totals' });
    const tile = (key: string) => within(totals).getByTestId(key).querySelector('dd')!.textContent;
    expect(tile('stats.questions')).toBe('1,234');
    expect(tile('stats.chats')).toBe('12');
    expect(tile('stats.tokens')).toBe('56,789');
    expect(tile('stats.bad')).toBe('3');
    expect(tile('stats.annotationAnswers')).toBe('4');
    expect(tile('stats.cost')).toBe('0.0125');
    expect(tile('stats.ttftP50')).toBe('812.3 ms');
    expect(tile('stats.ttftP95')).toBe('none');
    const first = server.callsTo('GET', STATS)[0]!.query;
    expect(first.get('appId')).toBe('app1');
    expect(first.get('bucket')).toBe('day');
    expect(Number(first.get('to')) - Number(first.get('from'))).toBe(7 * 86_400_000);

    fireEvent.change(screen.getByRole('combobox', { name: 'Per' }), { target: { value: 'hour' } });
    await waitFor(() => expect(server.callsTo('GET', STATS).map((c) => c.query.get('bucket'))).toEqual(['day', 'hour']));
    const hourly = server.callsTo('GET', STATS)[1]!.query;
    expect(Number(hourly.get('to')) - Number(hourly.get('from'))).toBe(7 * 86_400_000);
    expect((await screen.findByTestId('stats-covers')).textContent).toMatch(/per hour \(UTC\)\.$/);
    expect(screen.getAllByRole('figure')).toHaveLength(5);
    // 90 days of hours are more buckets than the platform answers: not offered.
    const periods = within(screen.getByRole('combobox', { name: 'Period' })).getAllByRole('option');
    expect(periods.map((o) => (o as HTMLOptionElement).value)).toEqual(['1', '7', '30']);
  });
});
