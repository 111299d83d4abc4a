// /channels: the gateway's upstream channels, paged by the gateway, with a
// search and a status filter kept in the address. Create and edit (the form
// re-reads what was saved), enable and disable, delete with a confirmation,
// and tests: one model, a channel's models, or every channel at once, each
// model showing its latency or the upstream's exact error. What the list
// shows is always re-read from the gateway, which keeps every test's result.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'wouter';
import { ActionError } from '../../actions';
import { useLang } from '../../i18n';
import { keepPreviousData } from '../../query';
import { Loading, Pager } from '../../ui';
import type { GatewayUser } from '../gateway-api';
import { ChannelForm } from './ChannelForm';
import { ChannelTable } from './ChannelTable';
import { channelsApi, type ChannelPage, type PublicChannel, type StatusFilter, type TestAllResult } from './channels-api';
import { TestAllSummary } from './TestAllSummary';
import '../console.css';
import './channels.css';

const PAGE = 20;
const STATUSES: StatusFilter[] = ['', 'enabled', 'disabled', 'auto_disabled'];
const STATUS_LABEL = {
  '': 'channels.filter.all',
  enabled: 'channels.filter.enabled',
  disabled: 'channels.filter.disabled',
  auto_disabled: 'channels.filter.auto_disabled',
} as const;

/** The form open above the list: a new channel, or one being edited. */
type Editing = { kind: 'new' } | { kind: 'edit'; channel: PublicChannel } | null;

export default function ChannelsPage({ me }: { me: GatewayUser }) {
  void me;
  const { t } = useLang();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const status = (STATUSES.includes(params.get('status') as StatusFilter) ? params.get('status') : '') as StatusFilter;
  const offset = Math.max(0, Number.parseInt(params.get('offset') ?? '0', 10) || 0);
  const client = useQueryClient();
  const [editing, setEditing] = useState<Editing>(null);
  const [saved, setSaved] = useState('');
  const [testAll, setTestAll] = useState<{ busy: boolean; result?: TestAllResult; error?: unknown }>({ busy: false });
  const { data: providers } = useQuery({ queryKey: ['channels', 'providers'], queryFn: ({ signal }) => channelsApi.providers(signal) });
  const { data } = useQuery({
    queryKey: ['channels', 'list', { q, status, offset }],
    queryFn: ({ signal }) => channelsApi.list({ q, status, offset, limit: PAGE }, signal),
    placeholderData: keepPreviousData,
  });
  // Every page of the list: a change or a test moves channels between filters and pages.
  const reload = () => void client.invalidateQueries({ queryKey: ['channels', 'list'] });

  const setQuery = (next: { q?: string; status?: string; offset?: number }) =>
    setParams((p) => {
      const out = new URLSearchParams(p);
      for (const [k, v] of Object.entries(next)) {
        if (v === undefined || v === '' || v === 0) out.delete(k);
        else out.set(k, String(v));
      }
      // A new search or filter starts at its first page.
      if (next.offset === undefined) out.delete('offset');
      return out;
    });

  const runTestAll = async () => {
    setTestAll({ busy: true });
    try {
      setTestAll({ busy: false, result: await channelsApi.testAll() });
    } catch (err) {
      setTestAll({ busy: false, error: err });
    }
    reload();
  };

  return (
    <section className="stack">
      <h1>{t('channels.title')}</h1>
      <p className="muted">
        <span>{t('channels.intro')}</span>
      </p>
      <div className="toolbar">
        <SearchBox key={q} initial={q} onSearch={(text) => setQuery({ q: text })} />
        <label className="ch-inline">
          <span>{t('channels.filter.status')}</span>
          <select value={status} onChange={(e) => setQuery({ status: e.target.value })}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {t(STATUS_LABEL[s])}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => (setSaved(''), setEditing({ kind: 'new' }))}>
          <span>{t('channels.new')}</span>
        </button>
        <button type="button" className="secondary" disabled={testAll.busy} onClick={runTestAll}>
          <span>{testAll.busy ? t('channels.testingAll') : t('channels.testAll')}</span>
        </button>
      </div>
      {saved && (
        <p role="status" className="notice ok">
          <span>{saved}</span>
        </p>
      )}
      <ActionError error={testAll.error} />
      {testAll.result && <TestAllSummary result={testAll.result} onClose={() => setTestAll({ busy: false })} />}
      {editing && providers && (
        <ChannelForm
          key={editing.kind === 'edit' ? editing.channel.id : 'new'}
          channel={editing.kind === 'edit' ? editing.channel : undefined}
          providers={providers}
          onDone={(fresh) => {
            setEditing(null);
            if (fresh) {
              setSaved(
                t('channels.saved', { name: fresh.name, models: fresh.models.length, key: fresh.key_set ? t('channels.keySet') : t('channels.keyNotSet') }),
              );
              // The saved row at once, so that the list agrees with the notice while its pages are read again.
              client.setQueriesData<ChannelPage>({ queryKey: ['channels', 'list'] }, (page) =>
                page ? { ...page, data: page.data.map((c) => (c.id === fresh.id ? fresh : c)) } : page,
              );
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
            <span>{q || status ? t('channels.countFiltered', { n: data.total }) : t('channels.count', { n: data.total })}</span>
          </p>
          {data.data.length === 0 ? (
            <p className="notice">
              <span>{q || status ? t('channels.noneFiltered') : t('channels.none')}</span>
            </p>
          ) : (
            <ChannelTable channels={data.data} onChanged={reload} onEdit={(channel) => (setSaved(''), setEditing({ kind: 'edit', channel }))} />
          )}
          <Pager offset={offset} pageSize={PAGE} total={data.total} onOffset={(o) => setQuery({ q, status, offset: o })} />
        </>
      )}
    </section>
  );
}

function SearchBox({ initial, onSearch }: { initial: string; onSearch: (q: string) => void }) {
  const { t } = useLang();
  const [text, setText] = useState(initial);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSearch(text.trim());
  };
  return (
    <form role="search" className="row grow ch-searchbox" onSubmit={submit} aria-label={t('channels.search')}>
      <input
        className="grow ch-search"
        type="search"
        aria-label={t('channels.search')}
        placeholder={t('channels.searchHint')}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit" className="secondary">
        <span>{t('channels.searchButton')}</span>
      </button>
    </form>
  );
}
