// @vitest-environment jsdom
// The gateway console's top-up codes with no browser: an administrator makes
// codes (shown once, each copied), disables and deletes them, the list read
// back from the admin API after each change; any user redeems a code beside
// their balance, which is read again, and a refused code shows the gateway's
// own words.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import RedemptionsPage from '../../src/console/redemptions/RedemptionsPage';
import TokensPage from '../../src/console/tokens/TokensPage';
import { fakeServer, renderWithQueries, type FakeServer } from './fake-server';

const root = { id: 1, username: 'root', role: 'root', status: 'enabled', balance: 0 };
const bob = { id: 2, username: 'bob', role: 'user', status: 'enabled', balance: 1.5, leased_micros: 0, used_micros: 0, request_count: 0 };

const code = (id: number, name: string, hint: string, status = 'unused', extra: object = {}) => ({
  id,
  name,
  key_hint: hint,
  quota: 5,
  quota_micros: 5_000_000,
  status,
  created_by: 1,
  created_at: Date.UTC(2026, 0, 2, 3, 4),
  redeemed_by: null,
  redeemed_by_username: null,
  redeemed_at: null,
  ...extra,
});

function stubClipboard() {
  const writeText = vi.fn(() => Promise.resolve());
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
  return writeText;
}

afterEach(() => {
  Reflect.deleteProperty(navigator, 'clipboard');
  history.replaceState(null, '', '/');
});

/** The admin API's codes, held here: the page reads back what the routes below changed. */
function codesServer(): { server: FakeServer; codes: ReturnType<typeof code>[] } {
  const server = fakeServer();
  const codes = [code(1, 'launch', 'kbr...aaaa', 'redeemed', { redeemed_by: 2, redeemed_by_username: 'bob', redeemed_at: Date.UTC(2026, 0, 3) })];
  server.on('GET', '/api/redemptions', () => ({ json: { data: [...codes].reverse(), total: codes.length, offset: 0, limit: 20 } }));
  return { server, codes };
}

const rowOf = (hint: string) => screen.getByText(hint).closest('tr')!;

describe('the console top-up codes page without a browser', () => {
  it('shows the new codes once, each with its Copy and a Copy all, and reads the list again', async () => {
    const writeText = stubClipboard();
    const { server, codes } = codesServer();
    server.on('POST', '/api/redemptions', (c) => {
      const made = [code(2, c.body.name, 'kbr...bbbb'), code(3, c.body.name, 'kbr...cccc')];
      codes.push(...made);
      return { json: { keys: ['kbr-first-code-bbbb', 'kbr-second-code-cccc'], data: made }, status: 201 };
    });
    renderWithQueries(<RedemptionsPage me={root as never} />);
    const redeemed = (await screen.findByText('kbr...aaaa')).closest('tr')!;
    expect(within(redeemed).getByText('redeemed')).toBeTruthy();
    expect(within(redeemed).getByTestId('redeemed-by').textContent).toBe('bob');
    // A redeemed code can only be deleted.
    expect(within(redeemed).queryByRole('button', { name: /^(Disable|Enable)/ })).toBeNull();
    expect(screen.getByText('Codes: 1')).toBeTruthy();

    const form = screen.getByRole('form', { name: 'New top-up codes' });
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'spring' } });
    fireEvent.change(within(form).getByLabelText('Amount per code (units)'), { target: { value: '5' } });
    fireEvent.change(within(form).getByLabelText('How many (1 to 100)'), { target: { value: '2' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create codes' }));

    const panel = await screen.findByRole('status');
    expect(server.callsTo('POST', '/api/redemptions').map((c) => c.body)).toEqual([{ name: 'spring', quota: 5, count: 2 }]);
    expect(
      within(panel)
        .getAllByTestId('new-code')
        .map((k) => k.textContent),
    ).toEqual(['kbr-first-code-bbbb', 'kbr-second-code-cccc']);
    expect(panel.textContent).toContain('Created 2 codes “spring” of 5 units each.');
    expect(panel.textContent).toContain('they will not be shown again');
    // The list is read again and shows the new codes by their hints, never the codes.
    await screen.findByText('kbr...cccc');
    expect(server.callsTo('GET', '/api/redemptions')).toHaveLength(2);
    expect(screen.getByText('Codes: 3')).toBeTruthy();
    expect(screen.getByRole('table').textContent).not.toContain('kbr-first-code-bbbb');

    const second = within(panel).getByText('kbr-second-code-cccc').closest('li')!;
    fireEvent.click(within(second).getByRole('button', { name: 'Copy' }));
    await waitFor(() => expect(writeText).toHaveBeenLastCalledWith('kbr-second-code-cccc'));
    fireEvent.click(within(panel).getByRole('button', { name: 'Copy all' }));
    await waitFor(() => expect(writeText).toHaveBeenLastCalledWith('kbr-first-code-bbbb\nkbr-second-code-cccc'));

    // Closed, the codes are gone for good: nothing on the page can show them again.
    fireEvent.click(within(panel).getByRole('button', { name: 'Close' }));
    expect(screen.queryByText('kbr-first-code-bbbb')).toBeNull();
    expect(screen.queryAllByTestId('new-code')).toHaveLength(0);
  });

  it('refuses a bad amount or count in place, sending nothing', async () => {
    const { server } = codesServer();
    renderWithQueries(<RedemptionsPage me={root as never} />);
    await screen.findByText('kbr...aaaa');
    const form = screen.getByRole('form', { name: 'New top-up codes' });
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'x' } });
    fireEvent.change(within(form).getByLabelText('Amount per code (units)'), { target: { value: '0' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create codes' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('Enter an amount in units, more than 0.');
    fireEvent.change(within(form).getByLabelText('Amount per code (units)'), { target: { value: '1' } });
    fireEvent.change(within(form).getByLabelText('How many (1 to 100)'), { target: { value: '101' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create codes' }));
    await waitFor(() => expect(within(form).getByRole('alert').textContent).toBe('Enter a whole number of codes, from 1 to 100.'));
    expect(server.callsTo('POST', '/api/redemptions')).toHaveLength(0);
  });

  it('disables and enables an unused code, and deletes one only once asked', async () => {
    const { server, codes } = codesServer();
    codes.push(code(2, 'spring', 'kbr...bbbb'), code(3, 'spring', 'kbr...cccc'));
    server.on('PATCH', '/api/redemptions/3', (c) => {
      Object.assign(codes[2]!, c.body);
      return { json: codes[2] };
    });
    server.on('DELETE', '/api/redemptions/2', () => {
      codes.splice(1, 1);
      return { json: { deleted: true, id: 2 } };
    });
    renderWithQueries(<RedemptionsPage me={root as never} />);
    await screen.findByText('kbr...cccc');

    fireEvent.click(within(rowOf('kbr...cccc')).getByRole('button', { name: 'Disable code spring (kbr...cccc)' }));
    await waitFor(() => expect(within(rowOf('kbr...cccc')).getByTestId('code-status').textContent).toBe('disabled'));
    expect(server.callsTo('PATCH', '/api/redemptions/3').map((c) => c.body)).toEqual([{ status: 'disabled' }]);
    fireEvent.click(within(rowOf('kbr...cccc')).getByRole('button', { name: 'Enable code spring (kbr...cccc)' }));
    await waitFor(() => expect(within(rowOf('kbr...cccc')).getByTestId('code-status').textContent).toBe('unused'));
    expect(server.callsTo('PATCH', '/api/redemptions/3').map((c) => c.body)).toEqual([{ status: 'disabled' }, { status: 'unused' }]);

    // The first press asks; nothing is sent until the answer is yes.
    fireEvent.click(within(rowOf('kbr...bbbb')).getByRole('button', { name: 'Delete “spring (kbr...bbbb)”' }));
    const ask = within(rowOf('kbr...bbbb')).getByRole('group', { name: 'Delete “spring (kbr...bbbb)”' });
    expect(ask.textContent).toContain('Delete “spring (kbr...bbbb)”? This cannot be undone.');
    expect(server.callsTo('DELETE', '/api/redemptions/2')).toHaveLength(0);
    fireEvent.click(within(ask).getByRole('button', { name: 'Yes, delete' }));
    await waitFor(() => expect(screen.queryByText('kbr...bbbb')).toBeNull());
    expect(server.callsTo('DELETE', '/api/redemptions/2')).toHaveLength(1);
    expect(screen.getByText('Codes: 2')).toBeTruthy();
  });

  it('searches by name in the address, and shows a refused change in the gateway’s words', async () => {
    const { server, codes } = codesServer();
    codes.push(code(2, 'spring', 'kbr...bbbb'));
    server.on('PATCH', '/api/redemptions/2', () => ({
      json: { error: { message: "Invalid 'status': code 2 was already redeemed", type: 'invalid_request_error', param: 'status', code: null } },
      status: 400,
    }));
    renderWithQueries(<RedemptionsPage me={root as never} />);
    await screen.findByText('kbr...bbbb');
    fireEvent.click(within(rowOf('kbr...bbbb')).getByRole('button', { name: 'Disable code spring (kbr...bbbb)' }));
    expect((await screen.findByRole('alert')).textContent).toBe("Invalid 'status': code 2 was already redeemed");

    fireEvent.change(screen.getByRole('searchbox', { name: 'Search codes by name' }), { target: { value: ' spr ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/redemptions').at(-1)!.query.get('q')).toBe('spr'));
    expect(new URLSearchParams(location.search).get('q')).toBe('spr');
    await screen.findByText('Codes found: 2');
  });
});

describe('redeeming a code beside the balance, as a plain user', () => {
  function userServer() {
    const server = fakeServer();
    let balance = bob.balance;
    server.on('GET', '/api/auth/me', () => ({ json: { user: { ...bob, balance }, csrf_token: 'csrf' } }));
    server.on('GET', '/api/tokens', () => ({ json: { data: [], total: 0, offset: 0, limit: 20 } }));
    server.on('POST', '/api/user/topup', (c) => {
      if (c.body.key !== 'kbr-good-code') {
        return {
          json: {
            error: {
              message: "Invalid 'key': this code does not exist, was already used, or was disabled",
              type: 'invalid_request_error',
              param: 'key',
              code: null,
            },
          },
          status: 400,
        };
      }
      balance += 5;
      return { json: { added: 5, balance, balance_micros: balance * 1e6 } };
    });
    return server;
  }

  it('posts the code, says what was added and the balance now, and reads the balance again', async () => {
    const server = userServer();
    renderWithQueries(<TokensPage me={bob as never} />);
    await waitFor(() => expect(screen.getByTestId('own-balance').textContent).toBe('Your balance: 1.5 units.'));
    const form = screen.getByRole('form', { name: 'Redeem a code' });
    expect((within(form).getByRole('button', { name: 'Redeem' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(within(form).getByLabelText('Top-up code'), { target: { value: '  kbr-good-code ' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Redeem' }));

    expect((await within(form).findByRole('status')).textContent).toBe('Added 5 units; your balance is now 6.5 units.');
    expect(server.callsTo('POST', '/api/user/topup').map((c) => c.body)).toEqual([{ key: 'kbr-good-code' }]);
    // The balance above is the gateway's, read again (not the form's sum).
    await waitFor(() => expect(screen.getByTestId('own-balance').textContent).toBe('Your balance: 6.5 units.'));
    expect(server.callsTo('GET', '/api/auth/me')).toHaveLength(2);
    expect((within(form).getByLabelText('Top-up code') as HTMLInputElement).value).toBe('');
  });

  it('shows the gateway’s refusal of a used or unknown code, and leaves the balance as it was', async () => {
    const server = userServer();
    renderWithQueries(<TokensPage me={bob as never} />);
    await waitFor(() => expect(screen.getByTestId('own-balance').textContent).toBe('Your balance: 1.5 units.'));
    const form = screen.getByRole('form', { name: 'Redeem a code' });
    fireEvent.change(within(form).getByLabelText('Top-up code'), { target: { value: 'kbr-used-code' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Redeem' }));
    expect((await within(form).findByRole('alert')).textContent).toBe("Invalid 'key': this code does not exist, was already used, or was disabled");
    expect(within(form).queryByRole('status')).toBeNull();
    // What was typed stays, to be corrected.
    expect((within(form).getByLabelText('Top-up code') as HTMLInputElement).value).toBe('kbr-used-code');
    expect(server.callsTo('GET', '/api/auth/me')).toHaveLength(1);
    expect(screen.getByTestId('own-balance').textContent).toBe('Your balance: 1.5 units.');
  });
});
