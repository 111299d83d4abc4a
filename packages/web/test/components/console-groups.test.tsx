// @vitest-environment jsdom
// The console's price groups with no browser: the Groups page lists each
// group's ratio and what uses it, adds and edits a group (what it then says
// is read back from the gateway), refuses a bad ratio before sending it, and
// shows the gateway's own words when a group in use cannot be deleted
// (`default` offers no Delete at all); the Users page moves a user to another
// group; the token form offers a group to administrators only.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import GroupsPage from '../../src/console/groups/GroupsPage';
import { TokenForm } from '../../src/console/tokens/TokenForm';
import UsersPage from '../../src/console/users/UsersPage';
import { fakeServer, renderWithQueries } from './fake-server';

const root = { id: 1, username: 'root', role: 'root', status: 'enabled', group: 'default', balance: 0 };
const plain = { id: 2, username: 'alice', role: 'user', status: 'enabled', group: 'default', balance: 0 };

interface Group {
  name: string;
  ratio: number;
  description: string;
  users: number;
  tokens: number;
  channels: number;
  created_at: number;
  updated_at: number;
}
const group = (name: string, ratio: number, used: Partial<Group> = {}): Group => ({
  name,
  ratio,
  description: '',
  users: 0,
  tokens: 0,
  channels: 0,
  created_at: 0,
  updated_at: 0,
  ...used,
});

/** The admin API's groups, held here: the page reads back what PUT and DELETE changed. */
function groupsServer(groups: Group[]) {
  const server = fakeServer();
  server.on('GET', '/api/groups', () => ({ json: { data: groups } }));
  return server;
}
const rowOf = (name: string) => screen.getByText(name, { selector: 'strong' }).closest('tr')!;

describe('the console groups without a browser', () => {
  it('lists the groups, adds one and edits its ratio, each save read back from the gateway', async () => {
    const groups = [group('default', 1, { users: 3 }), group('vip', 2, { users: 1, tokens: 2, channels: 1, description: 'Priority' })];
    const server = groupsServer(groups);
    const put = (name: string) =>
      server.on('PUT', `/api/groups/${name}`, (c) => {
        const at = groups.findIndex((g) => g.name === name);
        const next = { ...(groups[at] ?? group(name, 1)), ratio: c.body.ratio, description: c.body.description };
        if (at < 0) groups.push(next);
        else groups[at] = next;
        return { json: next };
      });
    put('half');
    put('vip');
    server.on('GET', '/api/groups/half', () => ({ json: groups.find((g) => g.name === 'half') }));
    server.on('GET', '/api/groups/vip', () => ({ json: groups.find((g) => g.name === 'vip') }));
    renderWithQueries(<GroupsPage me={root as never} />);

    await waitFor(() => expect(within(rowOf('vip')).getByTestId('ratio').textContent).toBe('2'));
    expect(within(rowOf('vip')).getByText('200% of the price')).toBeTruthy();
    expect(within(rowOf('vip')).getByTestId('used-by').textContent).toBe('1 user, 2 tokens, 1 channel');
    expect(within(rowOf('vip')).getByText('Priority')).toBeTruthy();
    expect(within(rowOf('default')).getByTestId('used-by').textContent).toBe('3 users, 0 tokens, 0 channels');
    // default is never deleted: no button offers it.
    expect(within(rowOf('default')).queryByRole('button', { name: 'Delete “default”' })).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: 'Add a group' }));
    const form = screen.getByRole('form', { name: 'A new group' });
    fireEvent.change(within(form).getByLabelText(/^Name/), { target: { value: 'half' } });
    fireEvent.change(within(form).getByLabelText(/^Price ratio/), { target: { value: '-1' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    expect(within(form).getByRole('alert').textContent).toBe('Enter a ratio from 0 to 1000.');
    expect(server.callsTo('PUT', '/api/groups/half')).toHaveLength(0);
    fireEvent.change(within(form).getByLabelText(/^Price ratio/), { target: { value: '0.5' } });
    fireEvent.change(within(form).getByLabelText('Description'), { target: { value: ' Half price ' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Saved: callers in half are now charged 0.5 × the price.'));
    expect(server.callsTo('PUT', '/api/groups/half').map((c) => c.body)).toEqual([{ ratio: 0.5, description: 'Half price' }]);
    await waitFor(() => expect(within(rowOf('half')).getByTestId('ratio').textContent).toBe('0.5'));
    expect(within(rowOf('half')).getByText('50% of the price')).toBeTruthy();

    fireEvent.click(within(rowOf('vip')).getByRole('button', { name: 'Edit the group vip' }));
    const edit = screen.getByRole('form', { name: 'Group vip' });
    // A group's name is not edited: only its ratio and description.
    expect(within(edit).queryByLabelText(/^Name/)).toBeNull();
    expect((within(edit).getByLabelText(/^Price ratio/) as HTMLInputElement).value).toBe('2');
    fireEvent.change(within(edit).getByLabelText(/^Price ratio/), { target: { value: '1.75' } });
    fireEvent.click(within(edit).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Saved: callers in vip are now charged 1.75 × the price.'));
    expect(server.callsTo('PUT', '/api/groups/vip').map((c) => c.body)).toEqual([{ ratio: 1.75, description: 'Priority' }]);
  });

  it("shows the gateway's words when a group in use cannot be deleted, and deletes one that nothing uses", async () => {
    const groups = [group('default', 1), group('vip', 2, { users: 1 }), group('spare', 3)];
    const server = groupsServer(groups);
    const message = 'The group vip is in use by 1 user, 0 tokens and 0 channels: move them to another group first';
    server.on('DELETE', '/api/groups/vip', () => ({ json: { error: { message, type: 'invalid_request_error', code: 'conflict', param: null } }, status: 409 }));
    server.on('DELETE', '/api/groups/spare', () => {
      groups.splice(2, 1);
      return { json: { deleted: true, name: 'spare' } };
    });
    renderWithQueries(<GroupsPage me={root as never} />);
    await screen.findByText('spare');

    fireEvent.click(within(rowOf('vip')).getByRole('button', { name: 'Delete “vip”' }));
    fireEvent.click(within(rowOf('vip')).getByRole('button', { name: 'Yes, delete' }));
    await waitFor(() => expect(within(rowOf('vip')).getByRole('alert').textContent).toBe(message));

    fireEvent.click(within(rowOf('spare')).getByRole('button', { name: 'Delete “spare”' }));
    fireEvent.click(within(rowOf('spare')).getByRole('button', { name: 'Yes, delete' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Deleted the group spare.'));
    await waitFor(() => expect(screen.queryByText('spare', { selector: 'strong' })).toBeNull());
  });

  it('moves a user to another group on the Users page, and says the group the gateway then holds', async () => {
    const users = [
      { ...root, leased_micros: 0, used_micros: 0, request_count: 0, created_at: 0 },
      { ...plain, leased_micros: 0, used_micros: 0, request_count: 0, created_at: 0 },
    ];
    const server = groupsServer([group('default', 1, { users: 2 }), group('half', 0.5)]);
    server.on('GET', '/api/users', () => ({ json: { data: users, total: users.length, offset: 0, limit: 20 } }));
    server.on('PATCH', '/api/users/2', (c) => {
      users[1] = { ...users[1]!, ...c.body };
      return { json: users[1] };
    });
    server.on('GET', '/api/users/2', () => ({ json: users[1] }));
    renderWithQueries(<UsersPage me={root as never} />);
    const row = (await screen.findByText('alice')).closest('tr')!;
    expect(within(row).getByTestId('group').textContent).toBe('default');
    fireEvent.click(within(row).getByRole('button', { name: 'Change the group of alice' }));
    const form = screen.getByRole('form', { name: 'Group of alice' });
    const select = within(form).getByLabelText(/^Group/) as HTMLSelectElement;
    await waitFor(() => expect([...select.options].map((o) => o.value)).toEqual(['default', 'half']));
    fireEvent.change(select, { target: { value: 'half' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Saved: alice is now in the group half.'));
    expect(server.callsTo('PATCH', '/api/users/2').map((c) => c.body)).toEqual([{ group: 'half' }]);
    await waitFor(() => expect(within(screen.getByText('alice').closest('tr')!).getByTestId('group').textContent).toBe('half'));
  });

  it("offers a token's group to administrators only, and sends it only when it changes", async () => {
    const server = groupsServer([group('default', 1), group('half', 0.5)]);
    const token = {
      id: 7,
      user_id: 2,
      name: 'ci',
      key_hint: 'sk-…abcd',
      status: 'enabled',
      expires_at: null,
      quota_limit_micros: null,
      quota_used_micros: 0,
      models: [],
      ip_allow: null,
      group: null,
      created_at: 0,
      last_used_at: null,
      platform: false,
    };
    server.on('PATCH', '/api/tokens/7', (c) => ({ json: { ...token, ...c.body } }));
    server.on('GET', '/api/tokens/7', () => ({ json: { ...token, group: 'half' } }));
    let done: unknown;
    const { unmount } = renderWithQueries(<TokenForm token={token as never} me={root as never} onDone={(s) => (done = s)} />);
    const select = screen.getByLabelText(/^Group/) as HTMLSelectElement;
    await waitFor(() => expect([...select.options].map((o) => o.textContent)).toEqual(['The owner’s group', 'default', 'half']));
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(server.callsTo('PATCH', '/api/tokens/7')).toHaveLength(1));
    expect(server.callsTo('PATCH', '/api/tokens/7')[0]!.body).not.toHaveProperty('group');
    unmount();

    const second = renderWithQueries(<TokenForm token={token as never} me={root as never} onDone={(s) => (done = s)} />);
    const again = screen.getByLabelText(/^Group/) as HTMLSelectElement;
    await waitFor(() => expect(again.options).toHaveLength(3));
    fireEvent.change(again, { target: { value: 'half' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(done).toMatchObject({ token: { group: 'half' } }));
    expect(server.callsTo('PATCH', '/api/tokens/7')[1]!.body).toMatchObject({ group: 'half' });
    second.unmount();

    // A plain user's form has no group, and never asks the gateway for groups.
    const before = server.callsTo('GET', '/api/groups').length;
    renderWithQueries(<TokenForm me={plain as never} onDone={() => {}} />);
    expect(screen.queryAllByLabelText(/^Group/)).toHaveLength(0);
    expect(server.callsTo('GET', '/api/groups')).toHaveLength(before);
  });
});
