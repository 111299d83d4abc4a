// /apps: the team's applications (paged by the platform), a search by name,
// a form to make one, and delete. Each row opens its settings or its chat.
import type { ListAppsBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, withQuery, type Page, type PublicApp } from '../api';
import { useModelList } from '../models';
import { keepPreviousData } from '../query';
import { useLang } from '../i18n';
import { Boundary, formatTime, Loading, Pager } from '../ui';
import { DeleteButton } from '../actions';
import { CreateApp } from './CreateApp';

const PAGE_SIZE = 20;

export function AppsPage() {
  const { t } = useLang();
  const [, navigate] = useLocation();
  const [searchKey, setSearchKey] = useState('');
  const [settled, setSettled] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSettled(searchKey.trim()), 250);
    return () => clearTimeout(timer);
  }, [searchKey]);
  return (
    <section className="stack">
      <h1>{t('apps.title')}</h1>
      <p className="muted">
        <span>{t('apps.lead')}</span>
      </p>
      <Boundary>
        <CreateForm onCreated={(id) => navigate(`/${encodeURIComponent(id)}`)} />
      </Boundary>
      <label className="ap-search">
        <span>{t('apps.search')}</span>
        <input type="search" value={searchKey} onChange={(e) => setSearchKey(e.target.value)} />
      </label>
      <Boundary>
        <AppList key={settled} searchKey={settled} />
      </Boundary>
    </section>
  );
}

function CreateForm({ onCreated }: { onCreated: (id: string) => void }) {
  const { data: models } = useModelList();
  if (!models) return <Loading />;
  return <CreateApp models={models} onCreated={onCreated} />;
}

function AppList({ searchKey }: { searchKey: string }) {
  const { t, lang } = useLang();
  const [offset, setOffset] = useState(0);
  const client = useQueryClient();
  const { data } = useQuery({
    queryKey: ['apps', { searchKey, offset, pageSize: PAGE_SIZE }],
    queryFn: ({ signal }) =>
      api<Page<PublicApp>>('/api/core/app/list', {
        json: { searchKey: searchKey || undefined, offset, pageSize: PAGE_SIZE } satisfies ListAppsBody,
        signal,
      }),
    placeholderData: keepPreviousData,
  });
  // The last app of a later page was deleted: show the page before.
  const pastTheEnd = data !== undefined && data.list.length === 0 && offset > 0;
  useEffect(() => {
    if (pastTheEnd) setOffset((o) => Math.max(0, o - PAGE_SIZE));
  }, [pastTheEnd]);
  if (!data || pastTheEnd) return <Loading />;
  if (data.list.length === 0) {
    return (
      <p className="muted">
        <span>{searchKey ? t('apps.noneFound') : t('apps.empty')}</span>
      </p>
    );
  }
  return (
    <>
      <p className="muted">
        <span>{t('apps.count', { n: data.total })}</span>
      </p>
      <div className="table-wrap">
        <table className="ap-table">
          <thead>
            <tr>
              <th>{t('common.name')}</th>
              <th>{t('apps.model')}</th>
              <th>{t('apps.datasetsCount')}</th>
              <th>{t('apps.updated')}</th>
              <th>
                <span className="ap-visually-hidden">{t('apps.actions')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.list.map((a) => (
              <tr key={a._id}>
                <td data-label={t('common.name')}>
                  <Link href={`/${encodeURIComponent(a._id)}`} className="ap-name">
                    {a.name}
                  </Link>
                  {a.intro && (
                    <div className="muted ap-intro">
                      <span>{a.intro}</span>
                    </div>
                  )}
                </td>
                <td data-label={t('apps.model')}>
                  <code>{a.model}</code>
                </td>
                <td data-label={t('apps.datasetsCount')}>
                  <span>{a.datasets.length}</span>
                </td>
                <td data-label={t('apps.updated')}>
                  <span>{formatTime(a.updateTime, lang)}</span>
                </td>
                <td>
                  <div className="ap-actions">
                    <Link href={withQuery('~/chat', { appId: a._id })} className="ap-button-link" aria-label={t('apps.chatNamed', { name: a.name })}>
                      <span>{t('apps.chat')}</span>
                    </Link>
                    <Link href={`/${encodeURIComponent(a._id)}`} className="ap-button-link secondary" aria-label={t('apps.settingsNamed', { name: a.name })}>
                      <span>{t('apps.settings')}</span>
                    </Link>
                    <DeleteButton
                      name={a.name}
                      onDelete={async () => {
                        await api(withQuery('/api/core/app/del', { appId: a._id }), { method: 'DELETE' });
                        // Every list that held it (this one, the keys page's), and its own queries.
                        await client.invalidateQueries({ queryKey: ['apps'] });
                      }}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager offset={offset} pageSize={PAGE_SIZE} total={data.total} onOffset={setOffset} />
    </>
  );
}
