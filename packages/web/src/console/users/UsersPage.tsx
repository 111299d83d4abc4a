// /users: every user with balance and usage, paged by the gateway. A balance
// is set outright or changed by an amount; what the page then shows is read
// back from the gateway, never assumed from the form (an edit that says it
// was saved was saved). A user's price group is changed the same way.
// Disable and enable; root makes admins.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { withQuery } from '../../api';
import { ActionError, FormButtons } from '../../actions';
import { useLang } from '../../i18n';
import { keepPreviousData } from '../../query';
import { formatTime, Loading, Pager, Table, type Column } from '../../ui';
import { formatUnits, gatewayApi, type GatewayUser, type GatewayUserPage } from '../gateway-api';
import { useLimitsEditor } from '../limits/useLimitsEditor';
import { useGroupNames } from '../groups/group-names';
import '../console.css';
import './users.css';

const PAGE = 20;
const MICROS = 1_000_000;

export default function UsersPage({ me }: { me: GatewayUser }) {
  const { t, lang } = useLang();
  const [offset, setOffset] = useState(0);
  const client = useQueryClient();
  const [editing, setEditing] = useState<GatewayUser | null>(null);
  const [grouping, setGrouping] = useState<GatewayUser | null>(null);
  const [saved, setSaved] = useState('');
  const [error, setError] = useState<unknown>(null);
  const { data } = useQuery({
    queryKey: ['users', { offset }],
    queryFn: ({ signal }) => gatewayApi<GatewayUserPage>(withQuery('/api/users', { offset, limit: PAGE }), { signal }),
    placeholderData: keepPreviousData,
  });
  const reload = () => void client.invalidateQueries({ queryKey: ['users'] });

  const patch = async (u: GatewayUser, change: Record<string, unknown>) => {
    setError(null);
    try {
      await gatewayApi(`/api/users/${u.id}`, { method: 'PATCH', json: change });
      reload();
    } catch (err) {
      setError(err);
    }
  };
  const manageable = (u: GatewayUser) => u.id !== me.id && u.role !== 'root' && (me.role === 'root' || u.role === 'user');
  // This page is for administrators only: rate limits and budgets are theirs to set.
  const limits = useLimitsEditor(true);

  return (
    <section className="stack">
      <h1>{t('users.title')}</h1>
      {saved && (
        <p role="status" className="notice ok">
          <span>{saved}</span>
        </p>
      )}
      <ActionError error={error} />
      {limits.notice}
      {limits.editor}
      {grouping && (
        <GroupEditor
          key={grouping.id}
          user={grouping}
          onDone={(fresh) => {
            setGrouping(null);
            if (fresh) {
              setSaved(t('users.groupSaved', { name: fresh.username, group: fresh.group }));
              reload();
            }
          }}
        />
      )}
      {editing && (
        <BalanceEditor
          key={editing.id}
          user={editing}
          onDone={(fresh) => {
            setEditing(null);
            if (fresh) {
              setSaved(t('users.saved', { name: fresh.username, balance: formatUnits(fresh.balance) }));
              reload();
            }
          }}
        />
      )}
      {!data ? (
        <Loading />
      ) : (
        <>
          <p className="muted">
            <span>{t('users.count', { n: data.total })}</span>
          </p>
          <Table
            className="console-table users-table"
            rows={data.data}
            rowKey={(u) => String(u.id)}
            columns={labelled<GatewayUser>([
              { header: t('users.username'), cell: (u) => <span>{u.username}</span> },
              { header: t('users.role'), cell: (u) => <span>{t(`users.role.${u.role as 'root' | 'admin' | 'user'}`)}</span> },
              {
                header: t('users.status'),
                cell: (u) => (
                  <span className={`badge ${u.status === 'enabled' ? 'ok' : 'bad'}`}>{t(`users.status.${u.status as 'enabled' | 'disabled'}`)}</span>
                ),
              },
              {
                header: t('users.balance'),
                cell: (u) => (
                  <>
                    <span className={u.balance < 0 ? 'error' : undefined} data-testid="balance">
                      {formatUnits(u.balance)}
                    </span>
                    {u.leased_micros > 0 && (
                      <div className="muted">
                        <span>{t('users.leased', { units: formatUnits(u.leased_micros / MICROS) })}</span>
                      </div>
                    )}
                  </>
                ),
              },
              { header: t('users.group'), cell: (u) => <span data-testid="group">{u.group}</span> },
              { header: t('users.used'), cell: (u) => <span>{formatUnits(u.used_micros / MICROS)}</span> },
              { header: t('users.requests'), cell: (u) => <span>{u.request_count}</span> },
              { header: t('limits.button'), cell: (u) => <span data-testid="user-rate-limits">{limits.summary('user', u.id)}</span> },
              { header: t('users.created'), cell: (u) => <span>{formatTime(u.created_at, lang)}</span> },
              {
                header: t('users.actions'),
                cell: (u) => (
                  <div className="row">
                    <button
                      type="button"
                      className="secondary"
                      aria-label={t('users.editBalanceOf', { name: u.username })}
                      onClick={() => (setSaved(''), setGrouping(null), setEditing(u))}
                    >
                      <span>{t('users.balance')}</span>
                    </button>
                    {limits.button('user', u.id, u.username)}
                    {(u.id === me.id || manageable(u)) && (
                      <button
                        type="button"
                        className="secondary"
                        aria-label={t('users.editGroupOf', { name: u.username })}
                        onClick={() => (setSaved(''), setEditing(null), setGrouping(u))}
                      >
                        <span>{t('users.group')}</span>
                      </button>
                    )}
                    {manageable(u) && (
                      <button
                        type="button"
                        className="secondary"
                        aria-label={t(u.status === 'enabled' ? 'users.disableNamed' : 'users.enableNamed', { name: u.username })}
                        onClick={() => patch(u, { status: u.status === 'enabled' ? 'disabled' : 'enabled' })}
                      >
                        <span>{t(u.status === 'enabled' ? 'users.disable' : 'users.enable')}</span>
                      </button>
                    )}
                    {manageable(u) && me.role === 'root' && (
                      <button
                        type="button"
                        className="secondary"
                        aria-label={t(u.role === 'admin' ? 'users.makeUserNamed' : 'users.makeAdminNamed', { name: u.username })}
                        onClick={() => patch(u, { role: u.role === 'admin' ? 'user' : 'admin' })}
                      >
                        <span>{t(u.role === 'admin' ? 'users.makeUser' : 'users.makeAdmin')}</span>
                      </button>
                    )}
                  </div>
                ),
              },
            ])}
          />
          <Pager offset={offset} pageSize={PAGE} total={data.total} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}

/**
 * Each cell with its column's name before it, shown only on a phone, where
 * the table becomes one card per user (users.css) and has no header row.
 */
function labelled<T>(columns: Column<T>[]): Column<T>[] {
  return columns.map((c) => ({
    header: c.header,
    cell: (row: T) => (
      <>
        <span className="users-cell-label" aria-hidden="true">
          {c.header}
        </span>
        {c.cell(row)}
      </>
    ),
  }));
}

type Mode = 'set' | 'add' | 'subtract';

/** Sets or changes one balance, then reads the user back: `onDone` gets what the gateway holds (nothing when cancelled). */
function BalanceEditor({ user, onDone }: { user: GatewayUser; onDone: (fresh: GatewayUser | null) => void }) {
  const { t } = useLang();
  const [mode, setMode] = useState<Mode>('set');
  const [amount, setAmount] = useState(formatUnits(user.balance).replace(/,/g, ''));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const n = Number(amount);
    if (amount.trim() === '' || !Number.isFinite(n) || n < 0) return setError(new Error(t('users.badAmount')));
    setBusy(true);
    setError(null);
    try {
      const change = mode === 'set' ? { balance: n } : { balance_delta: mode === 'add' ? n : -n };
      await gatewayApi(`/api/users/${user.id}`, { method: 'PATCH', json: change });
      onDone(await gatewayApi<GatewayUser>(`/api/users/${user.id}`));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <form className="card stack" onSubmit={submit} aria-label={t('users.editBalance', { name: user.username })}>
      <strong>{t('users.editBalance', { name: user.username })}</strong>
      <div className="row">
        <label>
          <span>{t('users.balanceMode')}</span>
          <select value={mode} onChange={(e) => setMode(e.target.value as Mode)}>
            {(['set', 'add', 'subtract'] as const).map((m) => (
              <option key={m} value={m}>
                {t(`users.mode.${m}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('users.amount')}</span>
          <input inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} />
        </label>
      </div>
      <ActionError error={error} />
      <FormButtons busy={busy} label={t('users.save')} busyLabel={t('users.saving')} cancelLabel={t('users.cancel')} onCancel={() => onDone(null)} />
    </form>
  );
}

/** Moves one user to another price group, then reads the user back: `onDone` gets what the gateway holds (nothing when cancelled). */
function GroupEditor({ user, onDone }: { user: GatewayUser; onDone: (fresh: GatewayUser | null) => void }) {
  const { t } = useLang();
  const names = useGroupNames();
  const [group, setGroup] = useState(user.group);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // The user's group is offered even before the list arrives (or if it is gone from it).
  const offered = names?.includes(user.group) ? names : [user.group, ...(names ?? [])];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await gatewayApi(`/api/users/${user.id}`, { method: 'PATCH', json: { group } });
      onDone(await gatewayApi<GatewayUser>(`/api/users/${user.id}`));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const title = t('users.groupTitle', { name: user.username });
  return (
    <form className="card stack" onSubmit={submit} aria-label={title}>
      <strong>{title}</strong>
      <label>
        <span>{t('users.group')}</span>
        <select value={group} onChange={(e) => setGroup(e.target.value)} aria-describedby="user-group-hint">
          {offered.map((g) => (
            <option key={g} value={g}>
              {g}
            </option>
          ))}
        </select>
        <small id="user-group-hint" className="muted">
          {t('users.groupHint')}
        </small>
      </label>
      <ActionError error={error} />
      <FormButtons busy={busy} label={t('users.save')} busyLabel={t('users.saving')} cancelLabel={t('users.cancel')} onCancel={() => onDone(null)} />
    </form>
  );
}
