// @vitest-environment jsdom
// The console's fallbacks with no browser: on the Prices page each model's row
// shows its fallbacks, and its editor sends the list in the order it was put
// in (after a move up), removes them all with DELETE, and shows the gateway's
// own words for a refused list; on the Logs page a row a fallback answered
// says which model was asked for, in the list and in its detail.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { Router } from 'wouter';
import LogsPage from '../../src/console/logs/LogsPage';
import PricesPage from '../../src/console/prices/PricesPage';
import { fakeServer, renderWithQueries } from './fake-server';

const root = { id: 1, username: 'root', role: 'root', status: 'enabled', balance: 0 };

const price = (model: string, input = 2, output = 8) => ({
  model,
  input_price: input,
  output_price: output,
  model_ratio: input / 2,
  completion_ratio: input > 0 ? output / input : null,
});
const unpriced = (model: string) => ({ ...price(model), charged: 'default', in_channels: true, has_traffic: false });

afterEach(() => history.replaceState(null, '', '/'));

/** The admin API's prices and fallbacks, held here: the page reads back what PUT and DELETE changed. */
function pricesServer(fallbacks: Record<string, string[]>) {
  const server = fakeServer();
  server.on('GET', '/api/prices', () => ({
    json: { data: [price('gpt-4o', 5, 15)], default: { input_price: 2, output_price: 8 }, unpriced: [unpriced('gpt-4o-mini'), unpriced('acme/local x')] },
  }));
  server.on('GET', '/api/fallbacks', () => ({ json: { data: Object.entries(fallbacks).map(([model, list]) => ({ model, fallbacks: list })) } }));
  return server;
}

const rowOf = (model: string) => screen.getByText(model, { selector: '[data-testid="model"]' }).closest('tr')!;

describe('the console fallbacks without a browser', () => {
  it('shows each row’s fallbacks, and saves an edited list in its order (after a move up)', async () => {
    const fallbacks: Record<string, string[]> = { 'gpt-4o-mini': ['gpt-4o'] };
    const server = pricesServer(fallbacks);
    const path = '/api/fallbacks/acme%2Flocal%20x';
    server.on('PUT', path, (c) => {
      fallbacks['acme/local x'] = c.body.fallbacks;
      return { json: { model: 'acme/local x', fallbacks: c.body.fallbacks } };
    });
    renderWithQueries(<PricesPage me={root as never} />);
    await waitFor(() => expect(within(rowOf('gpt-4o-mini')).getByTestId('fallbacks').textContent).toBe('then gpt-4o'));
    expect(within(rowOf('gpt-4o')).queryByTestId('fallbacks')).toBeNull();

    fireEvent.click(within(rowOf('acme/local x')).getByRole('button', { name: 'Edit the fallbacks of acme/local x' }));
    const form = screen.getByRole('form', { name: 'Fallbacks of acme/local x' });
    expect(within(form).getByTestId('fallbacks-empty')).toBeTruthy();
    // The select offers the models the page knows, never the model itself.
    const pick = within(form).getByLabelText('Add a model') as HTMLSelectElement;
    expect([...pick.options].map((o) => o.value)).toEqual(['', 'gpt-4o', 'gpt-4o-mini']);
    fireEvent.change(pick, { target: { value: 'gpt-4o' } });
    fireEvent.change(within(form).getByLabelText('Or type its name'), { target: { value: 'local-extractive' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add' }));
    // Its own name is refused in place.
    fireEvent.change(within(form).getByLabelText('Or type its name'), { target: { value: 'acme/local x' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add' }));
    expect(within(form).getByRole('alert').textContent).toBe('acme/local x cannot be its own fallback.');
    fireEvent.change(pick, { target: { value: 'gpt-4o-mini' } });
    expect(within(form).queryByRole('alert')).toBeNull();
    const shown = () =>
      within(form)
        .getAllByTestId('fallback')
        .map((c) => c.textContent);
    expect(shown()).toEqual(['gpt-4o', 'local-extractive', 'gpt-4o-mini']);
    expect((within(form).getByRole('button', { name: 'Move gpt-4o up' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(within(form).getByRole('button', { name: 'Move gpt-4o-mini up' }));
    expect(shown()).toEqual(['gpt-4o', 'gpt-4o-mini', 'local-extractive']);
    fireEvent.click(within(form).getByRole('button', { name: 'Move gpt-4o down' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Remove gpt-4o from the list' }));
    fireEvent.change(pick, { target: { value: 'gpt-4o' } });
    expect(shown()).toEqual(['gpt-4o-mini', 'local-extractive', 'gpt-4o']);
    // No fallbacks yet: nothing to remove.
    expect(within(form).queryByRole('button', { name: 'Remove fallbacks' })).toBeNull();
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));

    expect((await screen.findByRole('status')).textContent).toBe(
      'Saved: when every channel of acme/local x fails, it is answered by gpt-4o-mini → local-extractive → gpt-4o, tried in this order.',
    );
    expect(server.callsTo('PUT', path).map((c) => c.body)).toEqual([{ fallbacks: ['gpt-4o-mini', 'local-extractive', 'gpt-4o'] }]);
    expect(server.callsTo('PUT', path)[0]!.url).toBe(path);
    // The list is read again and the row shows it.
    await waitFor(() => expect(within(rowOf('acme/local x')).getByTestId('fallbacks').textContent).toBe('then gpt-4o-mini → local-extractive → gpt-4o'));
    expect(server.callsTo('GET', '/api/fallbacks')).toHaveLength(2);
    expect(screen.queryByRole('form', { name: 'Fallbacks of acme/local x' })).toBeNull();
  });

  it('removes the fallbacks with DELETE, and shows the gateway’s words for a refused list', async () => {
    const fallbacks: Record<string, string[]> = { 'gpt-4o': ['gpt-4o-mini', 'acme/local x'] };
    const server = pricesServer(fallbacks);
    server.on('PUT', '/api/fallbacks/gpt-4o', () => ({
      json: {
        error: {
          message: "Invalid 'fallbacks': gpt-4o cannot be its own fallback (request id: 123)",
          type: 'invalid_request_error',
          code: 'invalid_field',
          param: 'fallbacks',
        },
      },
      status: 400,
    }));
    server.on('DELETE', '/api/fallbacks/gpt-4o', () => {
      delete fallbacks['gpt-4o'];
      return { json: { deleted: true, model: 'gpt-4o' } };
    });
    renderWithQueries(<PricesPage me={root as never} />);
    await waitFor(() => expect(within(rowOf('gpt-4o')).getByTestId('fallbacks').textContent).toBe('then gpt-4o-mini → acme/local x'));

    fireEvent.click(within(rowOf('gpt-4o')).getByRole('button', { name: 'Edit the fallbacks of gpt-4o' }));
    const form = screen.getByRole('form', { name: 'Fallbacks of gpt-4o' });
    expect(
      within(form)
        .getAllByTestId('fallback')
        .map((c) => c.textContent),
    ).toEqual(['gpt-4o-mini', 'acme/local x']);
    fireEvent.click(within(form).getByRole('button', { name: 'Move acme/local x up' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    expect((await within(form).findByRole('alert')).textContent).toBe("Invalid 'fallbacks': gpt-4o cannot be its own fallback (request id: 123)");
    expect(server.callsTo('PUT', '/api/fallbacks/gpt-4o').map((c) => c.body)).toEqual([{ fallbacks: ['acme/local x', 'gpt-4o-mini'] }]);
    // Refused: the form stays open with the list as it was put.
    expect(
      within(form)
        .getAllByTestId('fallback')
        .map((c) => c.textContent),
    ).toEqual(['acme/local x', 'gpt-4o-mini']);

    fireEvent.click(within(form).getByRole('button', { name: 'Remove fallbacks' }));
    expect((await screen.findByRole('status')).textContent).toBe('Removed the fallbacks of gpt-4o: its failures are answered as they are.');
    expect(server.callsTo('DELETE', '/api/fallbacks/gpt-4o')).toHaveLength(1);
    await waitFor(() => expect(within(rowOf('gpt-4o')).queryByTestId('fallbacks')).toBeNull());
  });

  it('shows a log row a fallback answered as the model that answered, with the model asked for', async () => {
    const row = (id: number, requestId: string, model: string, requested: string | null) => ({
      id,
      request_id: requestId,
      created_at: Date.UTC(2026, 0, 2, 3, 4, 5),
      user_id: 1,
      user_name: 'root',
      token_id: 2,
      token_name: 'laptop',
      channel_id: 3,
      channel_name: 'sim',
      endpoint: '/v1/chat/completions',
      model,
      upstream_model: null,
      is_stream: false,
      prompt_tokens: 10,
      completion_tokens: 5,
      usage_source: 'upstream',
      cost: 0.00006,
      cost_micros: 60,
      latency_ms: 12,
      ttft_ms: null,
      status: 200,
      error: null,
      attempts: 2,
      requested_model: requested,
    });
    const fellBack = row(2, '20260102030405000aaaaaaaaaaaa', 'sim-chat', 'sim-503');
    const plain = row(1, '20260102030405000bbbbbbbbbbbb', 'sim-chat', null);
    const server = fakeServer();
    server.on('GET', '/api/logs', () => ({ json: { data: [fellBack, plain], total: 2, total_capped: false, next_cursor: null } }));
    server.on('GET', `/api/logs/${fellBack.request_id}`, () => ({ json: { ...fellBack, request_body: null, replayable: false } }));
    history.replaceState(null, '', '/logs');
    renderWithQueries(
      <Router base="/logs">
        <LogsPage me={root as never} />
      </Router>,
    );
    await screen.findByText('2 requests');
    const [first, second] = screen.getAllByRole('row').slice(1);
    expect(within(first!).getByTestId('fallback-for').textContent).toBe('fallback for sim-503');
    expect(within(first!).getByText('sim-chat')).toBeTruthy();
    expect(within(second!).queryByTestId('fallback-for')).toBeNull();

    fireEvent.click(within(first!).getAllByRole('link')[0]!);
    await screen.findByRole('heading', { level: 1, name: new RegExp(fellBack.request_id) });
    const model = screen.getByText('Model', { selector: 'dt' }).parentElement!;
    expect(within(model).getByRole('link').textContent).toBe('sim-chat');
    expect(within(model).getByTestId('fallback-for').textContent).toBe('fallback for sim-503');
  });
});
