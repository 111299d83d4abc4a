// @vitest-environment jsdom
// A share link's limits, edit form and embedding on the share links page,
// and the share page's visitor token, with no browser: what each link shows
// (per-visitor and link-wide QPM, usage points used of its maximum, its
// sign-in check, the sites that may embed it), the PUT an edit sends (null
// for an emptied limit), the create form's "More settings", the two snippets
// and the preview with the link's shareId and this origin, Copy (and its
// fallback); on the share page, ?authToken= sent with every call, the hook's
// uid used as the visitor's id, and a refusal shown in the platform's words.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PublicOutLink } from '../../src/api';
import { ShareLinksPage } from '../../src/apps/ShareLinks';
import { SharePage } from '../../src/chat/SharePage';
import { fakeServer, renderWithQueries, type FakeServer } from './fake-server';

const DETAIL = '/api/core/app/detail';
const LIST = '/api/support/outLink/list';
const CREATE = '/api/support/outLink/create';
const UPDATE = '/api/support/outLink/update';

const link = (id: string, name: string, more: Partial<PublicOutLink> = {}): PublicOutLink => ({
  _id: id,
  id,
  shareId: `share-${id}`,
  appId: 'app1',
  name,
  createTime: '2026-01-02T03:04:05Z',
  limit: {},
  usedPoints: 0,
  allowedOrigins: [],
  ...more,
});

/** The app and its links as the platform holds them: an update changes what the next list reads. */
function serveLinks(server: FakeServer, links: PublicOutLink[]) {
  server.on('GET', DETAIL, () => ({ data: { _id: 'app1', id: 'app1', name: 'Help "desk" <b>' } }));
  server.on('GET', LIST, () => ({ data: links }));
  server.on('PUT', UPDATE, (c) => {
    const l = links.find((x) => x.id === c.body.id)!;
    const limit = { ...l.limit };
    for (const [k, v] of Object.entries(c.body.limit ?? {})) {
      if (v === null) delete limit[k as keyof typeof limit];
      else Object.assign(limit, { [k]: v });
    }
    Object.assign(l, { name: c.body.name ?? l.name, limit, allowedOrigins: c.body.allowedOrigins ?? l.allowedOrigins });
    return { data: l };
  });
}

const rowOf = async (name: string) => (await screen.findByText(name)).closest('tr')!;

function stubClipboard(writeText: (text: string) => Promise<void>) {
  Object.defineProperty(navigator, 'clipboard', { value: { writeText: vi.fn(writeText) }, configurable: true });
  return navigator.clipboard.writeText as ReturnType<typeof vi.fn>;
}

afterEach(() => {
  Reflect.deleteProperty(navigator, 'clipboard');
  history.replaceState(null, '', '/');
  localStorage.clear();
});

describe('the share links page without a browser', () => {
  it("shows each link's limits: per visitor, in all, usage points used of the maximum, its sign-in check and sites", async () => {
    const server = fakeServer();
    serveLinks(server, [
      link('l1', 'Website widget', {
        limit: { QPM: 30, linkQPM: 100, maxUsagePoints: 5, hookUrl: 'https://auth.example.com/kb' },
        usedPoints: 1.25,
        allowedOrigins: ['https://www.example.com', 'https://shop.example.com'],
      }),
      link('l2', 'Spent', { limit: { maxUsagePoints: 0.5 }, usedPoints: 0.5 }),
      link('l3', 'Open', { usedPoints: 0.000123456 }),
      link('l4', 'Bare'),
    ]);
    renderWithQueries(<ShareLinksPage appId="app1" />);
    const items = async (name: string) =>
      within(await rowOf(name))
        .queryAllByRole('listitem')
        .map((li) => li.textContent);
    expect(await items('Website widget')).toEqual([
      '30 per minute per visitor',
      '100 per minute in all',
      '1.25 / 5 usage points',
      'sign-in check: https://auth.example.com/kb',
      'embeddable on https://www.example.com, https://shop.example.com',
    ]);
    expect(await items('Spent')).toEqual(['0.5 / 0.5 usage points (used up)']);
    expect(await items('Open')).toEqual(['0.000123 usage points spent']);
    expect(within(await rowOf('Bare')).getByText('none')).toBeTruthy();
  });

  it('edits a link: the PUT sends every limit, null for an emptied one, the origins one per line; the list is read again', async () => {
    const server = fakeServer();
    const links = [
      link('l1', 'Website widget', {
        limit: { expiredTime: '2099-06-30T21:59:59.000Z', QPM: 30, maxUsagePoints: 5 },
        allowedOrigins: ['https://old.example.com'],
      }),
    ];
    serveLinks(server, links);
    renderWithQueries(<ShareLinksPage appId="app1" />);
    fireEvent.click(within(await rowOf('Website widget')).getByRole('button', { name: 'Edit “Website widget”' }));
    const form = screen.getByRole('form', { name: 'Edit “Website widget”' });
    // The form starts from what the link holds.
    const field = (name: RegExp) => within(form).getByLabelText(name) as HTMLInputElement;
    expect(field(/^Link name/).value).toBe('Website widget');
    expect(field(/^Requests per minute per visitor/).value).toBe('30');
    expect(field(/^Usage points/).value).toBe('5');
    expect(field(/^Sites that may embed it/).value).toBe('https://old.example.com');

    fireEvent.change(field(/^Link name/), { target: { value: '  Shop widget ' } });
    fireEvent.change(field(/^Requests per minute per visitor/), { target: { value: '' } });
    fireEvent.change(field(/^Link-wide requests per minute/), { target: { value: '120' } });
    fireEvent.change(field(/^Usage points/), { target: { value: '' } });
    fireEvent.change(field(/^Sign-in check/), { target: { value: ' https://auth.example.com/kb ' } });
    fireEvent.change(field(/^Sites that may embed it/), { target: { value: 'https://www.example.com\n\n  http://localhost:5173  \n' } });
    const reads = server.callsTo('GET', LIST).length;
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));

    await waitFor(() => expect(screen.queryByRole('form', { name: /^Edit/ })).toBeNull());
    expect(server.callsTo('PUT', UPDATE).map((c) => c.body)).toEqual([
      {
        id: 'l1',
        name: 'Shop widget',
        // The expiry is unchanged: not sent (a date already past would be refused).
        limit: { QPM: null, linkQPM: 120, maxUsagePoints: null, hookUrl: 'https://auth.example.com/kb' },
        allowedOrigins: ['https://www.example.com', 'http://localhost:5173'],
      },
    ]);
    expect(server.callsTo('GET', LIST)).toHaveLength(reads + 1);
    const items = within(await rowOf('Shop widget'))
      .getAllByRole('listitem')
      .map((li) => li.textContent);
    expect(items.slice(1)).toEqual([
      '120 per minute in all',
      'sign-in check: https://auth.example.com/kb',
      'embeddable on https://www.example.com, http://localhost:5173',
    ]);
    expect(items[0]).toMatch(/^until /);

    // Emptying the expiry sends null; a refusal is shown in the platform's words and the form stays.
    fireEvent.click(within(await rowOf('Shop widget')).getByRole('button', { name: 'Edit “Shop widget”' }));
    const again = screen.getByRole('form', { name: 'Edit “Shop widget”' });
    fireEvent.change(within(again).getByLabelText(/^Expires/), { target: { value: '' } });
    server.on('PUT', UPDATE, () => ({
      json: { code: 400, statusText: 'invalid_field', message: 'allowedOrigins.0: an origin such as https://www.example.com' },
      status: 400,
    }));
    fireEvent.click(within(again).getByRole('button', { name: 'Save' }));
    expect(await within(again).findByRole('alert')).toHaveProperty('textContent', 'allowedOrigins.0: an origin such as https://www.example.com');
    expect(server.callsTo('PUT', UPDATE).at(-1)!.body.limit).toEqual({
      expiredTime: null,
      QPM: null,
      linkQPM: 120,
      maxUsagePoints: null,
      hookUrl: 'https://auth.example.com/kb',
    });
  });

  it('creates a link with the settings under "More settings", sending only what is filled in', async () => {
    const server = fakeServer();
    serveLinks(server, []);
    server.on('POST', CREATE, () => ({ data: 'share-new' }));
    renderWithQueries(<ShareLinksPage appId="app1" />);
    await screen.findByText('No share links yet.');
    fireEvent.change(screen.getByLabelText('Link name'), { target: { value: 'Docs site' } });
    fireEvent.click(screen.getByText('More settings'));
    fireEvent.change(screen.getByLabelText(/^Link-wide requests per minute/), { target: { value: '60' } });
    fireEvent.change(screen.getByLabelText(/^Usage points/), { target: { value: '2.5' } });
    fireEvent.change(screen.getByLabelText(/^Sites that may embed it/), { target: { value: 'https://docs.example.com' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create share link' }));
    await waitFor(() => expect(server.callsTo('POST', CREATE)).toHaveLength(1));
    expect(server.callsTo('POST', CREATE)[0]!.body).toEqual({
      appId: 'app1',
      name: 'Docs site',
      limit: { linkQPM: 60, maxUsagePoints: 2.5 },
      allowedOrigins: ['https://docs.example.com'],
    });
    // The form is emptied for the next link.
    await waitFor(() => expect((screen.getByLabelText('Link name') as HTMLInputElement).value).toBe(''));
  });

  it('embeds a link: the script tag and the iframe name its shareId on this origin, the preview frames its page, Copy copies', async () => {
    const server = fakeServer();
    serveLinks(server, [link('l1', 'Website widget', { allowedOrigins: ['https://www.example.com'] })]);
    renderWithQueries(<ShareLinksPage appId="app1" />);
    const embed = within(await rowOf('Website widget')).getByRole('button', { name: 'Embed “Website widget” on your site' });
    expect(embed.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(embed);
    expect(embed.getAttribute('aria-expanded')).toBe('true');
    const panel = screen.getByRole('region', { name: 'Embed “Website widget” on your site' });
    const origin = location.origin;
    const script = within(panel).getByRole('textbox', { name: 'Chat bubble (script tag)' }) as HTMLTextAreaElement;
    const iframe = within(panel).getByRole('textbox', { name: 'Chat in your page (iframe)' }) as HTMLTextAreaElement;
    expect(script.readOnly).toBe(true);
    expect(script.value).toBe(`<script src="${origin}/embed.js" data-share-id="share-l1" defer></script>`);
    // The app's name is the frame's title, escaped for the attribute.
    expect(iframe.value).toBe(
      `<iframe src="${origin}/chat/share?shareId=share-l1" title="Help &quot;desk&quot; &lt;b&gt;" style="width:100%;height:600px;border:0" allow="clipboard-write"></iframe>`,
    );
    expect(within(panel).getByText('Only these sites (and this platform) may embed it: https://www.example.com.')).toBeTruthy();
    const preview = within(panel).getByTitle('Preview of the share page of “Website widget”') as HTMLIFrameElement;
    expect(preview.tagName).toBe('IFRAME');
    expect(preview.src).toBe(`${origin}/chat/share?shareId=share-l1`);

    const writeText = stubClipboard(async () => {});
    const scriptGroup = within(panel).getByRole('group', { name: 'Chat bubble (script tag)' });
    fireEvent.click(within(scriptGroup).getByRole('button', { name: 'Copy the script tag' }));
    await waitFor(() => expect(within(scriptGroup).getByRole('status').textContent).toBe('Copied'));
    expect(writeText).toHaveBeenCalledWith(script.value);
    fireEvent.click(within(panel).getByRole('button', { name: 'Copy the iframe' }));
    await waitFor(() => expect(writeText).toHaveBeenLastCalledWith(iframe.value));

    // No clipboard for this page: the snippet is selected, and the reader told to copy it.
    stubClipboard(() => Promise.reject(new DOMException('denied', 'NotAllowedError')));
    const iframeGroup = within(panel).getByRole('group', { name: 'Chat in your page (iframe)' });
    fireEvent.click(within(iframeGroup).getByRole('button', { name: 'Copy the iframe' }));
    await waitFor(() => expect(within(iframeGroup).getByRole('status').textContent).toBe('Selected: press Ctrl+C (⌘C on a Mac) to copy.'));
    expect(document.activeElement).toBe(iframe);
    expect([iframe.selectionStart, iframe.selectionEnd]).toEqual([0, iframe.value.length]);

    // The edit form takes the same place; Close closes it.
    fireEvent.click(within(await rowOf('Website widget')).getByRole('button', { name: 'Edit “Website widget”' }));
    expect(screen.queryByRole('region', { name: 'Embed “Website widget” on your site' })).toBeNull();
    fireEvent.click(within(screen.getByRole('region', { name: 'Edit “Website widget”' })).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('region', { name: /Website widget/ })).toBeNull();
  });
});

describe('the share page with a visitor token, without a browser', () => {
  const INIT = '/api/support/outLink/init';
  const HISTORIES = '/api/core/chat/getHistories';
  // jsdom lays nothing out, and has no scrolling for the conversation to follow its end with.
  beforeEach(() => {
    Element.prototype.scrollIntoView = () => {};
  });

  it("sends ?authToken= with init and every call, and takes the hook's uid as the visitor's id", async () => {
    history.replaceState(null, '', '/chat/share?shareId=sh1&authToken=tok%20en');
    localStorage.setItem('kbchat.outLinkUid.sh1', 'visitor-kept-here');
    const server = fakeServer();
    server.on('GET', INIT, () => ({
      data: { app: { name: 'Members desk', intro: '', variables: [] }, uid: 'member-7', authRequired: true, allowedOrigins: [] },
    }));
    server.on('POST', HISTORIES, () => ({ data: { list: [], total: 0 } }));
    renderWithQueries(<SharePage />);
    await screen.findByRole('heading', { name: 'Members desk' });
    expect(server.callsTo('GET', INIT)[0]!.query.get('authToken')).toBe('tok en');
    await waitFor(() => expect(server.callsTo('POST', HISTORIES)).toHaveLength(1));
    expect(server.callsTo('POST', HISTORIES)[0]!.body).toMatchObject({ shareId: 'sh1', outLinkUid: 'member-7', authToken: 'tok en' });

    fireEvent.change(await screen.findByRole('textbox', { name: 'Message' }), { target: { value: 'Hello?' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send' }));
    const chat = await server.waitFor('POST', '/api/v1/chat/completions');
    expect(chat.query.get('shareId')).toBe('sh1');
    expect(chat.body).toMatchObject({ shareId: 'sh1', outLinkUid: 'member-7', authToken: 'tok en' });
    // The hook refuses the question: its message, plainly, under it.
    chat.replyJson({ code: 403, statusText: 'share_auth_refused', message: 'Your membership has lapsed.' }, 403);
    expect((await screen.findByText('Your membership has lapsed.')).closest('[role="alert"]')).toBeTruthy();
  });

  it("shows init's refusal in the platform's words, with no chat box; a sign-in check that timed out may be tried again", async () => {
    history.replaceState(null, '', '/chat/share?shareId=sh1&authToken=slow');
    const server = fakeServer();
    let answers = 0;
    server.on('GET', INIT, () =>
      answers++ === 0
        ? {
            json: { code: 403, statusText: 'share_auth_timeout', message: 'The sign-in check of this share link did not answer within 5 s: try again later.' },
            status: 403,
          }
        : { data: { app: { name: 'Members desk', intro: '', variables: [] }, uid: 'member-7', authRequired: true, allowedOrigins: [] } },
    );
    server.on('POST', HISTORIES, () => ({ data: { list: [], total: 0 } }));
    renderWithQueries(<SharePage />);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe('This chat did not openThe sign-in check of this share link did not answer within 5 s: try again later.');
    expect(screen.queryByRole('textbox', { name: 'Message' })).toBeNull();
    expect(screen.queryByText('Something went wrong here')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    await screen.findByRole('heading', { name: 'Members desk' });
    expect(await screen.findByRole('textbox', { name: 'Message' })).toBeTruthy();
  });

  it('a refused token is final: no Try again, and a missing token says what the platform says', async () => {
    history.replaceState(null, '', '/chat/share?shareId=sh1');
    const server = fakeServer();
    server.on('GET', INIT, (c) =>
      c.query.has('authToken')
        ? { data: null }
        : {
            json: { code: 401, statusText: 'share_auth_required', message: "This share link needs the visitor's token (authToken)." },
            status: 401,
          },
    );
    renderWithQueries(<SharePage />);
    expect((await screen.findByRole('alert')).textContent).toContain("This share link needs the visitor's token (authToken).");
    expect(server.callsTo('GET', INIT)[0]!.query.has('authToken')).toBe(false);
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
    expect(screen.queryByRole('textbox', { name: 'Message' })).toBeNull();
  });
});
