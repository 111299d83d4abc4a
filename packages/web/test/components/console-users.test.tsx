// @vitest-environment jsdom
// The gateway console's users page with no browser: the list from the admin
// API's answer, and a change that reads the list back from the gateway (what
// the page shows is never assumed from the click).
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import UsersPage from '../../src/console/users/UsersPage';
import { fakeServer, renderWithQueries } from './fake-server';

const user = (id: number, username: string, role = 'user', status = 'enabled') => ({
  id,
  username,
  role,
  status,
  balance: 12.5,
  leased_micros: 0,
  used_micros: 2_500_000,
  request_count: 7,
  created_at: '2026-01-02T03:04:05Z',
});

describe('the console users page without a browser', () => {
  it("lists the gateway's users and re-reads the list after a disable", async () => {
    const server = fakeServer();
    const users = [user(1, 'root', 'root'), user(2, 'alice')];
    server.on('GET', '/api/users', () => ({ json: { data: users, total: users.length } }));
    server.on('PATCH', '/api/users/2', (c) => {
      users[1] = { ...users[1]!, ...c.body };
      return { json: users[1] };
    });
    renderWithQueries(<UsersPage me={user(1, 'root', 'root') as never} />);
    const row = (await screen.findByText('alice')).closest('tr')!;
    expect(within(row).getByText('enabled')).toBeTruthy();
    expect(within(row).getByText('7')).toBeTruthy();
    expect(screen.getByText('Users: 2')).toBeTruthy();

    fireEvent.click(within(row).getByRole('button', { name: 'Disable alice' }));
    await waitFor(() => expect(within(screen.getByText('alice').closest('tr')!).getByText('disabled')).toBeTruthy());
    expect(server.callsTo('PATCH', '/api/users/2').map((c) => c.body)).toEqual([{ status: 'disabled' }]);
    expect(server.callsTo('GET', '/api/users')).toHaveLength(2);
  });
});
