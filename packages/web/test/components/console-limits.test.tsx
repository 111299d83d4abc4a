// @vitest-environment jsdom
// The console's rate limits with no browser: the Users page shows each user's
// limits and budget from one list; the editor sends only what is filled in
// (a budget with its period), names a bad number without sending anything,
// removes the row (DELETE) when emptied, and warns when the gateway counts
// per process because Redis is away.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import UsersPage from '../../src/console/users/UsersPage';
import { fakeServer, renderWithQueries } from './fake-server';

const root = { id: 1, username: 'root', role: 'root', status: 'enabled', balance: 0 };
const user = (id: number, username: string) => ({
  id,
  username,
  role: 'user',
  status: 'enabled',
  group: 'default',
  balance: 10,
  leased_micros: 0,
  used_micros: 0,
  request_count: 0,
  created_at: 0,
});

function limitsServer(rows: Record<string, unknown>[], problem: string | null = null) {
  const server = fakeServer();
  server.on('GET', '/api/users', () => ({ json: { data: [user(2, 'ann'), user(3, 'bo')], total: 2 } }));
  server.on('GET', '/api/rate-limits', () => ({ json: { data: rows, counting: 'redis', problem } }));
  return server;
}

const rowOf = (name: string) => screen.getAllByRole('row').find((r) => within(r).queryByText(name, { exact: true }))!;

describe('the console rate limits without a browser', () => {
  it('shows each user’s limits, sends only what is filled in, and names a bad number', async () => {
    const rows: Record<string, unknown>[] = [{ scope: 'user', subject: '2', rpm: 30, tpm: null, rpd: 1000, budget: { amount: 5, period: 'week' } }];
    const server = limitsServer(rows);
    server.on('PUT', '/api/rate-limits/user/3', (c) => {
      const row = { scope: 'user', subject: '3', rpm: null, tpm: null, rpd: null, budget: null, ...c.body };
      rows.push(row);
      return { json: row };
    });
    renderWithQueries(<UsersPage me={root as never} />);
    await waitFor(() => expect(within(rowOf('ann')).getByTestId('user-rate-limits').textContent).toBe('30 RPM · 1,000 RPD · 5 per week (from Monday)'));
    expect(within(rowOf('bo')).getByTestId('user-rate-limits').textContent).toBe('No limits');

    fireEvent.click(screen.getByRole('button', { name: 'Limits of bo' }));
    const form = screen.getByRole('form', { name: 'Limits of bo' });
    expect(within(form).getByTestId('limits-counting').textContent).toBe('Counted on Redis: exact across every gateway process that shares it.');
    fireEvent.change(within(form).getByLabelText('Tokens per minute'), { target: { value: '0' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save limits' }));
    expect(within(form).getByRole('alert').textContent).toBe('Tokens per minute: a whole number from 1, or empty');
    expect(server.callsTo('PUT', '/api/rate-limits/user/3')).toHaveLength(0);

    fireEvent.change(within(form).getByLabelText('Tokens per minute'), { target: { value: '40,000' } });
    fireEvent.change(within(form).getByLabelText('Budget (units)'), { target: { value: '2.5' } });
    fireEvent.change(within(form).getByRole('combobox'), { target: { value: 'day' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save limits' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Limits of bo saved.'));
    expect(server.callsTo('PUT', '/api/rate-limits/user/3')[0]!.body).toEqual({ tpm: 40000, budget: { amount: 2.5, period: 'day' } });
    await waitFor(() => expect(within(rowOf('bo')).getByTestId('user-rate-limits').textContent).toBe('40,000 TPM · 2.5 per day'));
  });

  it('removes a row when emptied, and warns while counted per process', async () => {
    const server = limitsServer([{ scope: 'user', subject: '2', rpm: 30, tpm: null, rpd: null, budget: null }], 'Redis at redis://cache:6379 is unreachable');
    server.on('DELETE', '/api/rate-limits/user/2', () => ({ json: { deleted: true, scope: 'user', subject: '2' } }));
    renderWithQueries(<UsersPage me={root as never} />);
    await waitFor(() => expect(within(rowOf('ann')).getByTestId('user-rate-limits').textContent).toBe('30 RPM'));
    fireEvent.click(screen.getByRole('button', { name: 'Limits of ann' }));
    const form = screen.getByRole('form', { name: 'Limits of ann' });
    expect(within(form).getByRole('status').textContent).toBe('Counted per process just now: Redis at redis://cache:6379 is unreachable');
    fireEvent.change(within(form).getByLabelText('Requests per minute'), { target: { value: '' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save limits' }));
    await waitFor(() => expect(server.callsTo('DELETE', '/api/rate-limits/user/2')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/rate-limits/user/2')).toHaveLength(0);
  });
});
