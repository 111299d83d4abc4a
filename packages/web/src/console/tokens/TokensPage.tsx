// /tokens: API tokens. Administrators see the tokens of every user they
// manage (filtered by owner, kept in the URL) and create tokens for them; a
// plain user sees and manages only its own (the API scopes both). The key is
// shown once, at creation. Paged by the gateway. Below the user's own balance,
// any user redeems a top-up code into it.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'wouter';
import { ActionError, DeleteButton } from '../../actions';
import { withQuery } from '../../api';
import { useLang } from '../../i18n';
import { keepPreviousData } from '../../query';
import { formatTime, Loading, Pager, SecretShownOnce, Table } from '../../ui';
import { formatUnits, gatewayApi, isAdmin, type GatewayToken, type GatewayTokenPage, type GatewayUser, type GatewayUserPage } from '../gateway-api';
import { RedeemCode } from '../redemptions/RedeemCode';
import { OwnBalance } from './OwnBalance';
import { PlatformTokenConfirm, PlatformTokenNote, type PlatformTokenAction } from './PlatformToken';
import { TokenForm, type Saved } from './TokenForm';
import { useLimitsEditor } from '../limits/useLimitsEditor';
import { SEARCH_DELAY_MS, useSearched } from '../searched';
import '../console.css';
import './tokens.css';

const PAGE = 20;
const MICROS = 1_000_000;

export default function TokensPage({ me }: { me: GatewayUser }) {
  const { t, lang } = useLang();
  const admin = isAdmin(me);
  const [params, setParams] = useSearchParams();
  // A hand-edited ?user= that is not an id is dropped (as the logs' filters do), not sent for the API's 400.
  const owner = /^[1-9]\d{0,9}$/.test(params.get('user') ?? '') ? params.get('user')! : '';
  const offset = Math.max(0, Number(params.get('offset')) || 0);
  const client = useQueryClient();
  const [editing, setEditing] = useState<GatewayToken | 'new' | null>(null);
  const [notice, setNotice] = useState<{ saved?: string; key?: string }>({});
  const [error, setError] = useState<unknown>(null);
  const [asking, setAsking] = useState<{ token: GatewayToken; action: PlatformTokenAction } | null>(null);
  // Rate limits and budgets: administrators set them (the API refuses others).
  const limits = useLimitsEditor(admin);
  // Owners by name: the users an administrator manages (one call, not one per row).
  const { data: users } = useQuery({
    queryKey: ['users', { limit: 500, admin }],
    queryFn: ({ signal }) => (admin ? gatewayApi<GatewayUserPage>('/api/users?limit=500', { signal }).then((r) => r.data) : Promise.resolve([me])),
  });
  const { data } = useQuery({
    queryKey: ['tokens', { offset, owner }],
    queryFn: ({ signal }) => gatewayApi<GatewayTokenPage>(withQuery('/api/tokens', { offset, limit: PAGE, user_id: owner || undefined }), { signal }),
    placeholderData: keepPreviousData,
  });
  // A token's change: every page of the list, and the balance above it (read from /api/auth/me).
  const reload = () => {
    void client.invalidateQueries({ queryKey: ['tokens'] });
    void client.invalidateQueries({ queryKey: ['me'] });
  };
  const nameOf = (id: number) => users?.find((u) => u.id === id)?.username ?? found?.find((u) => u.id === id)?.username ?? t('tokens.userN', { id });
  const setQuery = (next: Record<string, string>) =>
    setParams(Object.fromEntries(Object.entries({ user: owner, offset: String(offset), ...next }).filter(([, v]) => v && v !== '0')));

  const patch = async (token: GatewayToken, change: Record<string, unknown>) => {
    setError(null);
    try {
      await gatewayApi(`/api/tokens/${token.id}`, { method: 'PATCH', json: change });
      reload();
    } catch (err) {
      setError(err);
    }
  };
  /** As patch, for a caller that shows the failure itself. */
  const patchOrThrow = async (token: GatewayToken, change: Record<string, unknown>) => {
    await gatewayApi(`/api/tokens/${token.id}`, { method: 'PATCH', json: change });
    reload();
  };
  const remove = async (token: GatewayToken) => {
    await gatewayApi(`/api/tokens/${token.id}`, { method: 'DELETE' });
    reload();
  };
  const done = (saved: Saved | null) => {
    setEditing(null);
    if (!saved) return;
    setNotice(saved.key ? { key: saved.key } : { saved: t('tokens.saved', { name: saved.token.name }) });
    reload();
  };
  const manageable = (u: GatewayUser) => u.id === me.id || me.role === 'root' || u.role === 'user';
  const manageableOwners = users?.filter(manageable);
  // The owner filter searches users by name on the gateway (every user, not only the first page).
  const [ownerSearch, setOwnerSearch] = useState('');
  const ownerQuery = ownerSearch.trim();
  const searched = useSearched<GatewayUser>(admin && ownerQuery ? withQuery('/api/users', { q: ownerQuery, limit: 100 }) : null, SEARCH_DELAY_MS);
  const found = admin && ownerQuery ? searched.items.filter(manageable) : null;
  const chosenOwner = owner ? (users?.find((u) => String(u.id) === owner) ?? found?.find((u) => String(u.id) === owner)) : undefined;
  const ownerOptions = [...(found ?? manageableOwners ?? [])];
  if (owner && !ownerOptions.some((u) => String(u.id) === owner))
    ownerOptions.push(chosenOwner ?? ({ id: Number(owner), username: `#${owner}` } as GatewayUser));

  return (
    <section className="stack">
      <h1>{t('tokens.title')}</h1>
      <p className="muted">
        <span>{admin ? t('tokens.introAdmin') : t('tokens.introUser')}</span>
      </p>
      <OwnBalance />
      <RedeemCode />
      {notice.key && <SecretShownOnce secret={notice.key} message={t('tokens.created')} onClose={() => setNotice({})} />}
      {notice.saved && (
        <p role="status" className="notice ok">
          <span>{notice.saved}</span>
        </p>
      )}
      <ActionError error={error ?? searched.error} />
      {asking && (
        <PlatformTokenConfirm
          key={`${asking.action}:${asking.token.id}`}
          token={asking.token}
          action={asking.action}
          act={() => (asking.action === 'delete' ? remove(asking.token) : patchOrThrow(asking.token, { status: 'disabled' }))}
          onClose={() => setAsking(null)}
        />
      )}
      {limits.notice}
      {limits.editor}
      {editing ? (
        <TokenForm
          key={editing === 'new' ? 'new' : editing.id}
          token={editing === 'new' ? undefined : editing}
          owners={admin ? manageableOwners : undefined}
          me={me}
          onDone={done}
        />
      ) : (
        <div className="row">
          <button type="button" onClick={() => (setNotice({}), setEditing('new'))}>
            <span>{t('tokens.new')}</span>
          </button>
          {admin && users && (
            <>
              <label className="row">
                <span>{t('tokens.ownerFilter')}</span>
                <select value={owner} onChange={(e) => setQuery({ user: e.target.value, offset: '' })}>
                  <option value="">{t('tokens.everyone')}</option>
                  {ownerOptions.map((u) => (
                    <option key={u.id} value={u.id}>
                      {u.username}
                    </option>
                  ))}
                </select>
              </label>
              <input
                type="search"
                className="tokens-owner-search"
                aria-label={t('tokens.findOwner')}
                placeholder={t('tokens.findOwner')}
                value={ownerSearch}
                onChange={(e) => setOwnerSearch(e.target.value)}
              />
            </>
          )}
        </div>
      )}
      {!data ? (
        <Loading />
      ) : data.total === 0 ? (
        <p className="muted">
          <span>{t('tokens.none')}</span>
        </p>
      ) : (
        <>
          <p className="muted">
            <span>{t('tokens.count', { n: data.total })}</span>
          </p>
          <Table
            className="console-table"
            rows={data.data}
            rowKey={(k) => String(k.id)}
            columns={[
              {
                header: t('tokens.name'),
                cell: (k) => (
                  <>
                    <strong>{k.name}</strong>
                    <div>
                      <code className="muted">{k.key_hint}</code>
                    </div>
                    {k.platform && <PlatformTokenNote />}
                  </>
                ),
              },
              ...(admin ? [{ header: t('tokens.owner'), cell: (k: GatewayToken) => <span>{nameOf(k.user_id)}</span> }] : []),
              { header: t('tokens.status'), cell: (k) => <Status token={k} /> },
              {
                header: t('tokens.used'),
                cell: (k) => (
                  <span data-testid="quota">
                    {k.quota_limit_micros === null
                      ? t('tokens.usedNoLimit')
                      : t('tokens.usedOf', { used: formatUnits(k.quota_used_micros / MICROS), limit: formatUnits(k.quota_limit_micros / MICROS) })}
                  </span>
                ),
              },
              {
                header: t('tokens.limits'),
                cell: (k) => (
                  <dl className="token-limits">
                    <dt>{t('tokens.models')}</dt>
                    <dd>{k.models.length ? k.models.join(', ') : t('tokens.allModels')}</dd>
                    <dt>{t('tokens.ipAllow')}</dt>
                    <dd>{k.ip_allow ?? t('tokens.anyIp')}</dd>
                    <dt>{t('tokens.expires')}</dt>
                    <dd>{k.expires_at === null ? t('common.never') : formatTime(k.expires_at, lang)}</dd>
                    {admin && (
                      <>
                        <dt>{t('limits.button')}</dt>
                        <dd data-testid="token-rate-limits">{limits.summary('token', k.id)}</dd>
                      </>
                    )}
                    {k.group !== null && (
                      <>
                        <dt>{t('tokens.group')}</dt>
                        <dd data-testid="token-group">{k.group}</dd>
                      </>
                    )}
                  </dl>
                ),
              },
              { header: t('tokens.lastUsed'), cell: (k) => <span>{k.last_used_at === null ? t('common.never') : formatTime(k.last_used_at, lang)}</span> },
              {
                header: t('tokens.actions'),
                cell: (k) => (
                  <div className="row">
                    <button
                      type="button"
                      className="secondary"
                      aria-label={t('tokens.editNamed', { name: k.name })}
                      onClick={() => (setNotice({}), setEditing(k))}
                    >
                      <span>{t('common.edit')}</span>
                    </button>
                    {limits.button('token', k.id, k.name)}
                    <button
                      type="button"
                      className="secondary"
                      aria-label={t(k.status === 'enabled' ? 'tokens.disableNamed' : 'tokens.enableNamed', { name: k.name })}
                      onClick={() =>
                        k.platform && k.status === 'enabled'
                          ? setAsking({ token: k, action: 'disable' })
                          : patch(k, { status: k.status === 'enabled' ? 'disabled' : 'enabled' })
                      }
                    >
                      <span>{t(k.status === 'enabled' ? 'tokens.disable' : 'tokens.enable')}</span>
                    </button>
                    {k.platform ? (
                      <button
                        type="button"
                        className="danger"
                        aria-label={t('common.deleteNamed', { name: k.name })}
                        onClick={() => setAsking({ token: k, action: 'delete' })}
                      >
                        <span>{t('common.delete')}</span>
                      </button>
                    ) : (
                      <DeleteButton name={k.name} onDelete={() => remove(k)} />
                    )}
                  </div>
                ),
              },
            ]}
          />
          <Pager offset={offset} pageSize={PAGE} total={data.total} onOffset={(next) => setQuery({ offset: String(next) })} />
        </>
      )}
    </section>
  );
}

function Status({ token }: { token: GatewayToken }) {
  const { t } = useLang();
  if (token.status !== 'enabled') return <span className="badge bad">{t('tokens.disabled')}</span>;
  if (token.expires_at !== null && token.expires_at <= Date.now()) return <span className="badge warn">{t('tokens.expired')}</span>;
  return <span className="badge ok">{t('tokens.enabled')}</span>;
}
