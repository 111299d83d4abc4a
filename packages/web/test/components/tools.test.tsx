// @vitest-environment jsdom
// The tool sources pages and an application's Tools section, with no browser:
// the list (type, address, header hints, tools and when listed), the add form's
// body for an MCP server with a header and for a pasted OpenAPI document (and
// the values gone from the page once saved), the platform's refusal in its own
// words, Refresh (and a failed one, which keeps the tools), delete asked in
// place, a source's tools with the input schema folded; in the settings, the
// tools grouped by source, one whose source is gone shown as missing and taken
// out, at most 20, and the PUT that saves them with toolRounds.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { PublicApp, PublicToolSource, ToolSourceDetail } from '../../src/api';
import { SettingsPage } from '../../src/apps/SettingsPage';
import ToolRoutes from '../../src/tools/routes';
import { fakeServer, renderWithQueries, type FakeServer } from './fake-server';

const LIST = '/api/core/tool/source/list';
const DETAIL = '/api/core/tool/source/detail';
const CREATE = '/api/core/tool/source/create';
const REFRESH = '/api/core/tool/source/refresh';
const DELETE = '/api/core/tool/source/delete';

const tool = (name: string, description = `${name} does things`) => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
});

function source(id: string, name: string, tools: ReturnType<typeof tool>[], more: Partial<PublicToolSource> = {}): ToolSourceDetail {
  return {
    _id: id,
    id,
    type: 'mcp',
    name,
    url: `https://${id}.example.com/mcp`,
    transport: 'streamableHttp',
    headers: [],
    toolCount: tools.length,
    listTime: '2026-01-02T03:04:05Z',
    createTime: '2026-01-02T03:04:05Z',
    updateTime: '2026-01-02T03:04:05Z',
    tools,
    ...more,
  };
}

/** The team's sources as the platform holds them: list, detail and delete read and change the same list. */
function serveSources(server: FakeServer, sources: ToolSourceDetail[]) {
  server.on('GET', LIST, () => ({ data: sources.map(({ tools: _tools, ...s }) => s) }));
  server.on('GET', DETAIL, (c) => {
    const s = sources.find((x) => x.id === c.query.get('id'));
    return s ? { data: s } : { data: `Tool source ${c.query.get('id')} not found`, status: 404 };
  });
  server.on('DELETE', DELETE, (c) => {
    sources.splice(
      sources.findIndex((x) => x.id === c.query.get('id')),
      1,
    );
    return { data: null };
  });
}

afterEach(() => history.replaceState(null, '', '/'));

const cardOf = async (name: string) => (await screen.findByRole('link', { name })).closest('li')!;

describe('the tool sources pages without a browser', () => {
  it('lists each source with its type, address, header hints, tools and when they were listed', async () => {
    const server = fakeServer();
    serveSources(server, [
      source('s1', 'Weather', [tool('forecast'), tool('broken')], { headers: [{ name: 'Authorization', hint: 'Bearer …wxyz' }] }),
      source('s2', 'Pets API', [tool('list_pets')], { type: 'openapi', url: undefined, transport: undefined, baseUrl: 'https://pets.example.com/v1' }),
    ]);
    renderWithQueries(<ToolRoutes />);
    const weather = within(await cardOf('Weather'));
    expect(weather.getByText('MCP server')).toBeTruthy();
    expect(weather.getByText('https://s1.example.com/mcp')).toBeTruthy();
    expect(weather.getByText('Authorization: Bearer …wxyz')).toBeTruthy();
    expect(weather.getByText('2 tools')).toBeTruthy();
    expect(weather.getByText(/^Tools listed .*2026/)).toBeTruthy();
    const pets = within(await cardOf('Pets API'));
    expect(pets.getByText('OpenAPI')).toBeTruthy();
    expect(pets.getByText('https://pets.example.com/v1')).toBeTruthy();
    expect(pets.getByText('1 tool')).toBeTruthy();
    expect(pets.getByText('none')).toBeTruthy();
  });

  it('adds an MCP server with its header, sends no empty row, and opens the new source; the secret is gone from the page', async () => {
    const server = fakeServer();
    const sources: ToolSourceDetail[] = [];
    serveSources(server, sources);
    renderWithQueries(<ToolRoutes />);
    await screen.findByText('No tool sources yet: add the first one above.');
    const form = screen.getByRole('form', { name: 'Add a tool source' });
    expect(within(form).getByText(/TOOL_ALLOW_PRIVATE=true/)).toBeTruthy();
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'Weather' } });
    fireEvent.change(within(form).getByLabelText('Server address'), { target: { value: ' https://weather.example.com/mcp ' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add a header' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Add a header' }));
    const row = within(within(form).getByRole('group', { name: 'Header 1' }));
    fireEvent.change(row.getByLabelText('Header name'), { target: { value: 'Authorization' } });
    fireEvent.change(row.getByLabelText('Header value'), { target: { value: 'Bearer secret-0123456789' } });
    expect(row.getByLabelText('Header value').getAttribute('type')).toBe('password');
    fireEvent.click(within(form).getByRole('button', { name: 'Add source' }));

    const create = await server.waitFor('POST', CREATE);
    expect(create.body).toEqual({
      type: 'mcp',
      name: 'Weather',
      url: 'https://weather.example.com/mcp',
      headers: { Authorization: 'Bearer secret-0123456789' },
    });
    expect(within(form).getByRole('button', { name: 'Connecting…' })).toBeTruthy();
    sources.push(source('new1', 'Weather', [tool('forecast', "Tomorrow's weather in a city")], { headers: [{ name: 'Authorization', hint: 'Bearer …6789' }] }));
    create.reply('new1');

    // The new source's own page: its tools, the schema folded away.
    await screen.findByRole('heading', { level: 1, name: 'Weather' });
    expect(location.pathname).toBe('/new1');
    const item = (await screen.findByRole('heading', { level: 3, name: 'forecast' })).closest('li')!;
    expect(within(item).getByText("Tomorrow's weather in a city")).toBeTruthy();
    const details = item.querySelector('details')!;
    expect(details.open).toBe(false);
    expect(within(item).getByText('Input schema')).toBeTruthy();
    expect(details.textContent).toContain('"city"');
    expect(screen.getByText('Authorization: Bearer …6789')).toBeTruthy();
    expect(document.body.innerHTML).not.toContain('secret-0123456789');
  });

  it('adds an OpenAPI source from a pasted document with a base URL, and shows a refusal in the platform’s words', async () => {
    const server = fakeServer();
    serveSources(server, []);
    renderWithQueries(<ToolRoutes />);
    const form = await screen.findByRole('form', { name: 'Add a tool source' });
    fireEvent.click(within(form).getByRole('radio', { name: 'HTTP API (OpenAPI 3)' }));
    fireEvent.click(within(form).getByRole('radio', { name: 'Pasted' }));
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'Pets' } });
    fireEvent.change(within(form).getByLabelText('Document (JSON or YAML)'), { target: { value: 'openapi: 3.0.0\ninfo: {title: Pets}' } });
    fireEvent.change(within(form).getByLabelText('Base URL (optional)'), { target: { value: 'http://10.0.0.5/v1' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add source' }));
    const create = await server.waitFor('POST', CREATE);
    expect(create.body).toEqual({ type: 'openapi', name: 'Pets', document: 'openapi: 3.0.0\ninfo: {title: Pets}', baseUrl: 'http://10.0.0.5/v1' });
    create.reply('10.0.0.5 is a private address; set TOOL_ALLOW_PRIVATE=true to allow it', 400);
    expect((await within(form).findByRole('alert')).textContent).toBe('10.0.0.5 is a private address; set TOOL_ALLOW_PRIVATE=true to allow it');
    // Nothing typed is lost to a refusal.
    expect((within(form).getByLabelText('Name') as HTMLInputElement).value).toBe('Pets');
  });

  it('refreshes a source (and says why a refresh failed, keeping its tools), and deletes it after asking in place', async () => {
    const server = fakeServer();
    const sources = [source('s1', 'Weather', [tool('forecast')])];
    serveSources(server, sources);
    renderWithQueries(<ToolRoutes />);
    const card = within(await cardOf('Weather'));
    fireEvent.click(card.getByRole('button', { name: 'Refresh the tools of Weather' }));
    const refresh = await server.waitFor('POST', REFRESH);
    expect(refresh.body).toEqual({ id: 's1' });
    sources[0] = source('s1', 'Weather', [tool('forecast'), tool('extra')], { listTime: '2026-02-03T04:05:06Z' });
    refresh.reply(sources[0]);
    expect((await card.findByRole('status')).textContent).toBe('Refreshed: 2 tools.');
    await card.findByText('2 tools');

    fireEvent.click(card.getByRole('button', { name: 'Refresh the tools of Weather' }));
    (await server.waitFor('POST', REFRESH)).reply('The MCP server answered 503 Service Unavailable', 502);
    expect((await card.findByRole('alert')).textContent).toBe('The MCP server answered 503 Service Unavailable');
    expect(card.getByText('The last refresh failed; the tools listed before are kept.')).toBeTruthy();
    expect(card.getByText('2 tools')).toBeTruthy();

    fireEvent.click(card.getByRole('button', { name: 'Delete “Weather”' }));
    expect(server.callsTo('DELETE', DELETE)).toHaveLength(0);
    fireEvent.click(card.getByRole('button', { name: 'Yes, delete' }));
    await screen.findByText('No tool sources yet: add the first one above.');
    expect(server.callsTo('DELETE', DELETE)[0]!.query.get('id')).toBe('s1');
  });
});

const APP_DETAIL = '/api/core/app/detail';
const APP_UPDATE = '/api/core/app/update';

function appWith(tools: PublicApp['tools'], toolRounds = 5): PublicApp {
  return {
    _id: 'app1',
    id: 'app1',
    name: 'Weather desk',
    intro: '',
    type: 'simple',
    model: 'sim-tools',
    systemPrompt: '',
    datasets: [],
    search: { searchMode: 'mixedRecall', similarity: 0, limit: 3000, usingReRank: false, queryExtension: { enabled: false, background: '' } },
    classify: null,
    extract: null,
    annotationReply: { enabled: false, similarity: 0.9 },
    tools,
    toolRounds,
    createTime: '2026-01-02T03:04:05Z',
    updateTime: '2026-01-02T03:04:05Z',
  };
}

/** The settings page's other answers, and the app as the platform holds it (an update changes what the next detail reads). */
function serveApp(server: FakeServer, app: PublicApp) {
  server.on('GET', APP_DETAIL, () => ({ data: app }));
  server.on('PUT', APP_UPDATE, (c) => {
    Object.assign(app, c.body);
    return { data: app };
  });
  server.on('GET', '/api/core/ai/model/list', () => ({
    data: { gateway: { url: '', reachable: true }, models: [{ kind: 'llm', model: 'sim-tools', name: 'sim-tools', served: true }] },
  }));
  server.on('POST', '/api/core/dataset/list', () => ({ data: [] }));
}

describe("an application's Tools section without a browser", () => {
  it('groups the tools by source, shows a gone one as missing to take out, and saves the picks with toolRounds', async () => {
    const server = fakeServer();
    const app = appWith([
      { sourceId: 's1', name: 'forecast' },
      { sourceId: 'gone', name: 'old_tool' },
      { sourceId: 's2', name: 'dropped' },
    ]);
    serveApp(server, app);
    serveSources(server, [source('s1', 'Weather', [tool('forecast'), tool('broken')]), source('s2', 'Pets', [tool('list_pets')])]);
    renderWithQueries(<SettingsPage appId="app1" />);
    const section = within(await screen.findByRole('region', { name: 'Tools' }));
    const weather = within(await section.findByRole('group', { name: 'Weather' }));
    const pets = within(section.getByRole('group', { name: 'Pets' }));
    expect((weather.getByRole('checkbox', { name: 'forecast' }) as HTMLInputElement).checked).toBe(true);
    expect((weather.getByRole('checkbox', { name: 'broken' }) as HTMLInputElement).checked).toBe(false);
    expect(weather.getByRole('checkbox', { name: 'forecast' }).getAttribute('aria-describedby')).toBeTruthy();
    expect((pets.getByRole('checkbox', { name: 'list_pets' }) as HTMLInputElement).checked).toBe(false);
    expect(section.getByText('3 of 20 picked')).toBeTruthy();
    const missing = within(section.getByRole('group', { name: 'Missing tools' }));
    const gone = missing.getByRole('checkbox', { name: 'old_tool — its source was deleted' }) as HTMLInputElement;
    expect(gone.checked).toBe(true);
    expect(missing.getByRole('checkbox', { name: 'dropped — no longer listed by Pets' })).toBeTruthy();

    fireEvent.click(gone);
    fireEvent.click(missing.getByRole('checkbox', { name: 'dropped — no longer listed by Pets' }));
    expect(section.queryByRole('group', { name: 'Missing tools' })).toBeNull();
    fireEvent.click(weather.getByRole('checkbox', { name: 'broken' }));
    fireEvent.change(section.getByLabelText('Rounds of tool calls'), { target: { value: '3' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(server.callsTo('PUT', APP_UPDATE)).toHaveLength(1));
    expect(server.callsTo('PUT', APP_UPDATE)[0]!.body).toEqual({
      appId: 'app1',
      tools: [
        { sourceId: 's1', name: 'forecast' },
        { sourceId: 's1', name: 'broken' },
      ],
      toolRounds: 3,
    });
    await screen.findByText('Saved');
    expect((section.getByRole('checkbox', { name: 'broken' }) as HTMLInputElement).checked).toBe(true);
  });

  it('offers at most 20 tools: with 20 picked the others cannot be checked', async () => {
    const server = fakeServer();
    const many = Array.from({ length: 22 }, (_, i) => tool(`t${i + 1}`, ''));
    serveApp(server, appWith(many.slice(0, 20).map((t) => ({ sourceId: 's1', name: t.name }))));
    serveSources(server, [source('s1', 'Big', many)]);
    renderWithQueries(<SettingsPage appId="app1" />);
    const section = within(await screen.findByRole('region', { name: 'Tools' }));
    const t21 = (await section.findByRole('checkbox', { name: 't21' })) as HTMLInputElement;
    expect(t21.disabled).toBe(true);
    expect(section.getByText('The most an application can offer is 20: take one out to pick another.')).toBeTruthy();
    fireEvent.click(section.getByRole('checkbox', { name: 't1' }));
    await waitFor(() => expect(t21.disabled).toBe(false));
    expect(section.getByText('19 of 20 picked')).toBeTruthy();
  });

  it('says the team has no tool sources, with a link to add one', async () => {
    const server = fakeServer();
    serveApp(server, appWith([]));
    serveSources(server, []);
    renderWithQueries(<SettingsPage appId="app1" />);
    const section = within(await screen.findByRole('region', { name: 'Tools' }));
    await section.findByText('The team has no tool sources yet.');
    expect(section.getByRole('link', { name: 'Add one' }).getAttribute('href')).toBe('/tools');
  });
});
