// /apps/:appId/share: the application's share links (FastGPT's outLink): make
// one (name, optional expiry and requests per minute per visitor), see its
// public address with a copy button and when it was last used, delete it
// (it stops working at once).
import type { CreateOutLinkBody } from '@kbchat/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ActionError, DeleteButton } from '../actions';
import { api, withQuery } from '../api';
import { useLang } from '../i18n';
import { Boundary, CopyButton, formatTime, Loading, Table } from '../ui';
import { AppSubpage } from './AppSubpage';
import { shareLinksKey, useShareLinks } from './queries';

const shareUrl = (shareId: string) => `${location.origin}${withQuery('/chat/share', { shareId })}`;

export function ShareLinksPage({ appId }: { appId: string }) {
  const { t } = useLang();
  return (
    <AppSubpage appId={appId} title={t('share.title')}>
      <p className="muted">
        <span>{t('share.intro')}</span>
      </p>
      <Boundary>
        <CreateShareLink appId={appId} />
      </Boundary>
      <Boundary>
        <ShareLinkList appId={appId} />
      </Boundary>
    </AppSubpage>
  );
}

function CreateShareLink({ appId }: { appId: string }) {
  const { t } = useLang();
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [qpm, setQpm] = useState('');
  const create = useMutation({
    mutationFn: (json: CreateOutLinkBody) => api('/api/support/outLink/create', { json }),
    onSuccess: () => {
      setName('');
      setExpires('');
      setQpm('');
      void client.invalidateQueries({ queryKey: shareLinksKey(appId) });
    },
  });
  const error = create.error;
  function submit(e: FormEvent) {
    e.preventDefault();
    const limit = { expiredTime: expires ? new Date(`${expires}T23:59:59`).getTime() : undefined, QPM: qpm ? Number(qpm) : undefined };
    create.mutate({ appId, name: name.trim(), limit });
  }
  return (
    <form className="card stack" onSubmit={submit}>
      <div className="row">
        <label className="grow">
          <span>{t('share.name')}</span>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required />
        </label>
        <label>
          <span>{t('share.expires')}</span>
          <input type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </label>
        <label>
          <span>{t('share.qpm')}</span>
          <input type="number" min={1} value={qpm} onChange={(e) => setQpm(e.target.value)} />
        </label>
      </div>
      <ActionError error={error} />
      <div>
        <button type="submit">
          <span>{t('share.create')}</span>
        </button>
      </div>
    </form>
  );
}

function ShareLinkList({ appId }: { appId: string }) {
  const { t, lang } = useLang();
  const client = useQueryClient();
  const { data } = useShareLinks(appId);
  if (!data) return <Loading />;
  if (data.length === 0)
    return (
      <p>
        <span>{t('share.none')}</span>
      </p>
    );
  return (
    <Table
      rows={data}
      rowKey={(l) => l.id}
      columns={[
        { header: t('share.name'), cell: (l) => <span>{l.name}</span> },
        {
          header: t('share.address'),
          cell: (l) => (
            <div className="row">
              <a href={shareUrl(l.shareId)} target="_blank" rel="noreferrer" className="share-url">
                <span>{shareUrl(l.shareId)}</span>
              </a>
              <CopyButton text={shareUrl(l.shareId)} />
            </div>
          ),
        },
        {
          header: t('share.limits'),
          cell: (l) => (
            <span>
              {[
                l.limit.expiredTime && t('share.until', { date: formatTime(l.limit.expiredTime, lang) }),
                l.limit.QPM && t('share.perMinute', { n: l.limit.QPM }),
              ]
                .filter(Boolean)
                .join(' · ') || t('share.noLimits')}
            </span>
          ),
        },
        { header: t('share.lastUsed'), cell: (l) => <span>{l.lastTime ? formatTime(l.lastTime, lang) : t('common.never')}</span> },
        {
          header: null,
          cell: (l) => (
            <DeleteButton
              name={l.name}
              onDelete={async () => {
                await api(withQuery('/api/support/outLink/delete', { id: l.id }), { method: 'DELETE' });
                await client.invalidateQueries({ queryKey: shareLinksKey(appId) });
              }}
            />
          ),
        },
      ]}
    />
  );
}
