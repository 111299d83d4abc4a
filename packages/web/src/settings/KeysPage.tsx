// API keys: general (team-wide) or for one application. The key itself is in
// the create answer only: shown once, with a copy button. Above them, the base
// URL a client uses them with, from this page's own address (the platform that
// served it).
import type { CreateKeyBody, ListAppsBody } from '@kbchat/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { DeleteButton } from '../actions';
import { api, withQuery, type Page, type PublicApp, type PublicKey } from '../api';
import { useLang } from '../i18n';
import { Boundary, CopyButton, formatTime, Loading, SecretShownOnce, Table } from '../ui';

const KEYS = ['keys'];

export default function KeysPage() {
  const { t } = useLang();
  const [created, setCreated] = useState<string | null>(null);
  return (
    <section className="stack">
      <h1>{t('keys.title')}</h1>
      <p className="muted">
        <span>{t('keys.intro')}</span>
      </p>
      <BaseUrl />
      <Boundary>
        <CreateKey
          onCreated={(key) => {
            setCreated(key);
          }}
        />
      </Boundary>
      {created && <SecretShownOnce secret={created} message={t('keys.created')} onClose={() => setCreated(null)} />}
      <Boundary>
        <KeyList />
      </Boundary>
    </section>
  );
}

/** Where clients send a key: this platform's OpenAI-compatible API. */
function BaseUrl() {
  const { t } = useLang();
  const baseUrl = `${window.location.origin}/api/v1`;
  return (
    <section className="card stack keys-base-url" aria-labelledby="keys-base-url-title">
      <h2 id="keys-base-url-title">{t('keys.baseUrl')}</h2>
      <div className="row">
        <code data-testid="base-url">{baseUrl}</code>
        <CopyButton text={baseUrl} label={t('keys.copyBaseUrl')} />
      </div>
      <p className="muted">
        <span>{t('keys.baseUrlHint')}</span>
      </p>
    </section>
  );
}

function useApps() {
  return useQuery({
    queryKey: ['apps', { pageSize: 500 }],
    queryFn: ({ signal }) => api<Page<PublicApp>>('/api/core/app/list', { json: { pageSize: 500 } satisfies ListAppsBody, signal }).then((r) => r.list),
  });
}

function CreateKey({ onCreated }: { onCreated: (key: string) => void }) {
  const { t } = useLang();
  const { data: apps } = useApps();
  const [name, setName] = useState('');
  const [appId, setAppId] = useState('');
  const [expires, setExpires] = useState('');
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: (json: CreateKeyBody) => api<string>('/api/support/openapi/create', { json }),
    onSuccess: (key) => {
      setName('');
      onCreated(key);
      void client.invalidateQueries({ queryKey: KEYS });
    },
  });
  const error = create.error?.message ?? '';
  const busy = create.isPending;

  function submit(e: FormEvent) {
    e.preventDefault();
    // The end of the chosen day, in the reader's time zone.
    const expiredTime = expires ? new Date(`${expires}T23:59:59`).getTime() : undefined;
    create.mutate({ name: name || undefined, appId: appId || undefined, expiredTime });
  }

  return (
    <form className="card stack" onSubmit={submit}>
      <div className="row">
        <label className="grow">
          <span>{t('keys.name')}</span>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
        </label>
        <label className="grow">
          <span>{t('keys.scope')}</span>
          <select value={appId} onChange={(e) => setAppId(e.target.value)}>
            <option value="">{t('keys.general')}</option>
            {apps?.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('keys.expires')}</span>
          <input type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </label>
      </div>
      {error && (
        <p role="alert" className="error">
          <span>{error}</span>
        </p>
      )}
      <div>
        <button type="submit" disabled={busy}>
          <span>{t('keys.create')}</span>
        </button>
      </div>
    </form>
  );
}

function KeyList() {
  const { t, lang } = useLang();
  const client = useQueryClient();
  const { data: keys } = useQuery({ queryKey: KEYS, queryFn: ({ signal }) => api<PublicKey[]>('/api/support/openapi/list', { signal }) });
  const { data: apps } = useApps();
  if (!keys) return <Loading />;
  if (keys.length === 0)
    return (
      <p>
        <span>{t('keys.none')}</span>
      </p>
    );
  const appName = (id: string) => apps?.find((a) => a.id === id)?.name ?? t('keys.appGone');

  const remove = async (k: PublicKey) => {
    await api(withQuery('/api/support/openapi/delete', { id: k.id }), { method: 'DELETE' });
    await client.invalidateQueries({ queryKey: KEYS });
  };

  return (
    <Table
      rows={keys}
      rowKey={(k) => k.id}
      columns={[
        { header: t('common.name'), cell: (k) => <span>{k.name}</span> },
        { header: t('keys.hint'), cell: (k) => <code>{k.apiKey}</code> },
        { header: t('keys.scope'), cell: (k) => <span>{k.appId ? appName(k.appId) : t('keys.general')}</span> },
        { header: t('keys.lastUsed'), cell: (k) => <span>{k.lastUsedTime ? formatTime(k.lastUsedTime, lang) : t('common.never')}</span> },
        { header: t('keys.expiresCol'), cell: (k) => <span>{formatTime(k.limit.expiredTime, lang)}</span> },
        { header: null, cell: (k) => <DeleteButton name={k.name} onDelete={() => remove(k)} /> },
      ]}
    />
  );
}
