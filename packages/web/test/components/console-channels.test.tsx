// @vitest-environment jsdom
// The console's key pools with no browser: a channel whose key holds several
// keys shows each by its hint, with its state, and a disabled one its reason
// and when it is tested again; "Enable this key" calls the gateway and the
// list is read again; the form takes several keys, one a line (its help says
// so), and the order of the pool, and sends them as the API takes them.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import ChannelsPage from '../../src/console/channels/ChannelsPage';
import { fakeServer, renderWithQueries } from './fake-server';

const root = { id: 1, username: 'root', role: 'root', status: 'enabled', balance: 0 };
const key = (index: number, hint: string, disabled?: { reason: string }) => ({
  index,
  hint,
  status: disabled ? 'disabled' : 'enabled',
  reason: disabled?.reason ?? null,
  disabled_at: disabled ? Date.UTC(2025, 0, 2, 10, 0) : null,
  retest_at: disabled ? Date.UTC(2025, 0, 2, 10, 5) : null,
});

function channel(keys: ReturnType<typeof key>[], options: Record<string, unknown> = {}) {
  return {
    id: 7,
    name: 'pooled',
    type: 'openai',
    base_url: 'https://api.example.com/v1',
    key_set: true,
    keys,
    models: ['gpt-4o'],
    model_mapping: {},
    options,
    priority: 0,
    weight: 1,
    status: 'enabled',
    source: 'admin',
    env_provider: null,
    disabled_models: [],
    last_tests: [],
    created_at: 1,
    updated_at: 1,
  };
}

const providers = {
  types: [
    {
      type: 'openai',
      label: 'OpenAI-compatible',
      default_base_url: 'https://api.openai.com/v1',
      key_required: true,
      stream_usage_default: true,
      endpoints: ['chat'],
    },
  ],
  presets: [],
};

afterEach(() => history.replaceState(null, '', '/'));
// jsdom lays nothing out: the form's scroll into view (a browser's own method) does nothing here.
beforeAll(() => {
  Element.prototype.scrollIntoView = () => {};
});

describe('the console key pools without a browser', () => {
  it('shows each key by its hint with its state, and enables a disabled one', async () => {
    let keys = [key(0, 'sk-...aaaa'), key(1, 'sk-...cccc', { reason: '401: Incorrect API key provided: sk-poo****' }), key(2, 'sk-...bbbb')];
    const server = fakeServer();
    server.on('GET', '/api/channels/providers', () => ({ json: providers }));
    server.on('GET', '/api/channels', () => ({ json: { data: [channel(keys, { keyStrategy: 'random' })], total: 1, offset: 0, limit: 20 } }));
    server.on('POST', '/api/channels/7/keys/1/enable', () => {
      keys = keys.map((k) => ({ ...k, status: 'enabled', reason: null, disabled_at: null, retest_at: null }));
      return { json: { channel_id: 7, index: 1, enabled: true, channel: channel(keys) } };
    });
    renderWithQueries(<ChannelsPage me={root as never} />);
    const row = await waitFor(() => screen.getByText('pooled').closest('tr')!);
    expect(within(row).getByText('a pool of 3 keys, taken at random:')).toBeTruthy();
    const lines = () => [...row.querySelectorAll('.ch-key')].map((li) => li.querySelector('code')!.textContent + ' ' + li.querySelector('.badge')!.textContent);
    expect(lines()).toEqual(['sk-...aaaa in use', 'sk-...cccc disabled', 'sk-...bbbb in use']);
    expect(within(row).getByTestId('key-reason').textContent).toBe('401: Incorrect API key provided: sk-poo****');
    expect(within(row).getByText(/^Tested again automatically at .*; back in use if it answers\.$/)).toBeTruthy();
    expect(within(row).getByText('1 of 3 keys disabled')).toBeTruthy();

    fireEvent.click(within(row).getByRole('button', { name: 'Enable key sk-...cccc of pooled' }));
    await waitFor(() => expect(lines()).toEqual(['sk-...aaaa in use', 'sk-...cccc in use', 'sk-...bbbb in use']));
    expect(server.callsTo('POST', '/api/channels/7/keys/1/enable')).toHaveLength(1);
    expect(within(row).queryByText(/keys disabled/)).toBeNull();
  });

  it('takes several keys, one a line, and the pool’s order', async () => {
    const server = fakeServer();
    server.on('GET', '/api/channels/providers', () => ({ json: providers }));
    server.on('GET', '/api/channels', () => ({ json: { data: [], total: 0, offset: 0, limit: 20 } }));
    server.on('POST', '/api/channels', (c) => ({
      json: { ...channel([key(0, 'sk-...1111'), key(1, 'sk-...2222')], c.body.options), ...c.body, key: undefined },
      status: 201,
    }));
    server.on('GET', '/api/channels/7', () => ({ json: channel([key(0, 'sk-...1111'), key(1, 'sk-...2222')], { keyStrategy: 'random' }) }));
    renderWithQueries(<ChannelsPage me={root as never} />);
    fireEvent.click(await screen.findByRole('button', { name: 'New channel' }));
    const form = screen.getByRole('form', { name: 'New channel' });
    const field = within(form).getByLabelText('Key') as HTMLTextAreaElement;
    expect(field.tagName).toBe('TEXTAREA');
    expect(document.getElementById(field.getAttribute('aria-describedby')!)!.textContent).toContain('Several keys, one a line, make a pool');
    fireEvent.change(field, { target: { value: 'sk-first-key-0000001111\nsk-second-key-000002222\n' } });
    fireEvent.change(within(form).getByLabelText('Pool order'), { target: { value: 'random' } });
    fireEvent.change(within(form).getByLabelText('Models'), { target: { value: 'gpt-4o' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create channel' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/channels')).toHaveLength(1));
    const sent = server.callsTo('POST', '/api/channels')[0]!;
    expect(sent.body.key).toBe('sk-first-key-0000001111\nsk-second-key-000002222\n');
    expect(sent.body.options).toEqual({ keyStrategy: 'random' });
  });
});
