// /logs: the filters, the request-id search (every row, by the API's
// index), and one page of rows, newest first, paged by the API's cursor.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent, type MouseEvent } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import type { LogPage, PublicLog } from '@kbchat/contracts';
import { ApiError, withQuery } from '../../api';
import { ActionError } from '../../actions';
import { useLang, type Translate } from '../../i18n';
import { Boundary, CopyButton, Loading, Table } from '../../ui';
import { formatUnits, gatewayApi } from '../gateway-api';
import { Filters } from './Filters';
import { cursorOf, filtersOf, isFiltered, queryOf, rememberListQuery, rememberNext, trailOf, type LogFilters } from './query';
import { failed, FallbackFor, formatLogTime, NameOf } from './parts';

const PAGE = 50;

export function LogList() {
  const { t } = useLang();
  const [, navigate] = useLocation();
  // useSearch re-renders on a new query; the value is read as the address bar has it
  // (wouter's copy is decodeURI'd once more, which would change a model name holding '%').
  useSearch();
  const search = window.location.search;
  rememberListQuery(search);
  const filters = filtersOf(search);
  const cursor = cursorOf(search) ?? '';
  const show = (f: LogFilters, at?: string) => navigate(`~/logs${queryOf(f, at)}`);

  return (
    <section className="stack logs-page">
      <div className="logs-head">
        <h1>{t('requestLogs.title')}</h1>
        <FindRequest />
      </div>
      <Filters applied={filters} onApply={(f) => show(f)} />
      <Boundary key={search}>
        <Rows filters={filters} cursor={cursor} show={show} />
      </Boundary>
    </section>
  );
}

/**
 * A click anywhere on a row opens its request's detail, as its time's link
 * does (that link stays, for the keyboard and for a new tab); not a click on
 * a link or button inside it, nor one that ends a text selection.
 */
function openClickedRow(rows: PublicLog[], open: (requestId: string) => void) {
  return (e: MouseEvent<HTMLDivElement>) => {
    const target = e.target as HTMLElement;
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    if (target.closest('a, button, input, select, textarea, summary, label')) return;
    if (window.getSelection()?.toString()) return;
    const tr = target.closest('tbody tr');
    if (!tr?.parentElement) return;
    const row = rows[Array.prototype.indexOf.call(tr.parentElement.children, tr)];
    if (row) open(row.request_id);
  };
}

function Rows({ filters, cursor, show }: { filters: LogFilters; cursor: string; show: (f: LogFilters, cursor?: string) => void }) {
  const { t } = useLang();
  const [, navigate] = useLocation();
  const filterKey = queryOf(filters);
  const { data } = useQuery({
    queryKey: ['logs', filterKey, cursor],
    queryFn: ({ signal }) => gatewayApi<LogPage>(withQuery('/api/logs', { ...filters, cursor: cursor || undefined, limit: PAGE }), { signal }),
  });
  if (!data) return <Loading />;
  const trail = trailOf(filterKey, cursor);
  const pageNumber = trail[0] === '' ? trail.length : undefined;
  const filterLink = (change: LogFilters) => `~/logs${queryOf({ ...filters, ...change })}`;

  return (
    <>
      <div className="row logs-summary">
        <span role="status" className="muted">
          {data.total_capped
            ? t('requestLogs.countCapped', { n: data.total.toLocaleString() })
            : data.total === 1
              ? t('requestLogs.countOne')
              : t('requestLogs.count', { n: data.total.toLocaleString() })}
        </span>
        <CopyButton text={window.location.href} label={t('requestLogs.copyLink')} />
      </div>
      {data.data.length === 0 ? (
        <p className="card muted">
          <span>{t(isFiltered(filters) || cursor ? 'requestLogs.none' : 'requestLogs.noneYet')}</span>
        </p>
      ) : (
        // Table renders the rows in this order, one <tr> each: a row's place in the body is its place here.
        <div className="logs-rows" onClick={openClickedRow(data.data, (id) => navigate(`/${encodeURIComponent(id)}`))}>
          <Table
            className="console-table logs-table"
            rows={data.data}
            rowKey={(r) => r.request_id}
            rowClass={(r) => (failed(r) ? 'logs-failed' : undefined)}
            columns={[
              { header: t('requestLogs.col.time'), cell: (r) => <TimeCell row={r} /> },
              {
                header: t('requestLogs.col.userToken'),
                cell: (r) => (
                  <>
                    <NameOf id={r.user_id} name={r.user_name} href={r.user_id ? filterLink({ user_id: String(r.user_id), token_id: undefined }) : undefined} />
                    <div className="logs-small">
                      <NameOf id={r.token_id} name={r.token_name} href={r.token_id ? filterLink({ token_id: String(r.token_id) }) : undefined} />
                    </div>
                  </>
                ),
              },
              { header: t('requestLogs.col.model'), cell: (r) => <ModelCell row={r} t={t} /> },
              {
                header: t('requestLogs.col.channel'),
                cell: (r) => (
                  <NameOf id={r.channel_id} name={r.channel_name} href={r.channel_id ? filterLink({ channel_id: String(r.channel_id) }) : undefined} />
                ),
              },
              { header: t('requestLogs.col.status'), cell: (r) => <StatusCell row={r} t={t} /> },
              {
                header: t('requestLogs.col.tokens'),
                cell: (r) => <span>{`${r.prompt_tokens.toLocaleString()} / ${r.completion_tokens.toLocaleString()}`}</span>,
              },
              { header: t('requestLogs.col.cost'), cell: (r) => <span>{formatUnits(r.cost)}</span> },
              {
                header: t('requestLogs.col.latency'),
                cell: (r) => (
                  <span>{`${t('requestLogs.ms', { n: r.latency_ms.toLocaleString() })} / ${r.ttft_ms === null ? t('requestLogs.none.value') : t('requestLogs.ms', { n: r.ttft_ms.toLocaleString() })}`}</span>
                ),
              },
            ]}
          />
        </div>
      )}
      {(cursor || data.next_cursor) && (
        <nav className="pager" aria-label={t('requestLogs.title')}>
          {cursor && (
            <button type="button" className="secondary" onClick={() => show(filters)}>
              <span>{t('requestLogs.newest')}</span>
            </button>
          )}
          <button type="button" className="secondary" disabled={trail.length < 2} onClick={() => show(filters, trail[trail.length - 2])}>
            <span>{t('common.previous')}</span>
          </button>
          {pageNumber !== undefined && <span className="muted">{t('requestLogs.page', { n: pageNumber })}</span>}
          <button
            type="button"
            className="secondary"
            disabled={!data.next_cursor}
            onClick={() => {
              rememberNext(filterKey, cursor, data.next_cursor!);
              show(filters, data.next_cursor!);
            }}
          >
            <span>{t('common.next')}</span>
          </button>
        </nav>
      )}
    </>
  );
}

/** The time of day to the second, linking to the detail; the date below it. */
function TimeCell({ row }: { row: PublicLog }) {
  const { t, lang } = useLang();
  const when = new Date(row.created_at);
  const locale = lang === 'zh' ? 'zh-CN' : 'en-US';
  return (
    <>
      <Link
        href={`/${encodeURIComponent(row.request_id)}`}
        aria-label={t('requestLogs.openRequest', { time: formatLogTime(row.created_at, lang), id: row.request_id })}
      >
        <span>{when.toLocaleTimeString(locale, { timeStyle: 'medium' })}</span>
      </Link>
      <div className="muted logs-small">
        <span>{when.toLocaleDateString(locale, { dateStyle: 'medium' })}</span>
      </div>
    </>
  );
}

function ModelCell({ row, t }: { row: PublicLog; t: Translate }) {
  return (
    <>
      <span>{row.model}</span>
      {row.is_stream && <span className="badge logs-tag">{t('requestLogs.replay.stream')}</span>}
      {row.requested_model !== null && (
        <div className="logs-small">
          <FallbackFor model={row.requested_model} />
        </div>
      )}
      {row.upstream_model && row.upstream_model !== row.model && (
        <div className="muted logs-small">
          <span>{t('requestLogs.upstreamAs', { model: row.upstream_model })}</span>
        </div>
      )}
    </>
  );
}

function StatusCell({ row, t }: { row: PublicLog; t: Translate }) {
  return (
    <>
      <span className={`badge ${failed(row) ? 'bad' : 'ok'}`}>{row.status}</span>
      {row.attempts > 1 && <span className="badge warn logs-tag">{t('requestLogs.attempts', { n: row.attempts })}</span>}
      {row.error && (
        <div className="error logs-error-text" title={row.error}>
          <span>{row.error}</span>
        </div>
      )}
    </>
  );
}

/** Finds one request among all rows (the API's own lookup, not this page) and opens its detail. */
function FindRequest() {
  const { t } = useLang();
  const [, navigate] = useLocation();
  const [id, setId] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const wanted = id.trim();
    if (!wanted) return;
    setBusy(true);
    setError(null);
    try {
      await gatewayApi(`/api/logs/${encodeURIComponent(wanted)}`);
      navigate(`/${encodeURIComponent(wanted)}`);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 404 ? new Error(t('requestLogs.notFound', { id: wanted })) : err);
      setBusy(false);
    }
  };
  return (
    <form role="search" className="logs-find" onSubmit={submit}>
      <label htmlFor="logs-find-id">
        <span>{t('requestLogs.requestId')}</span>
      </label>
      <div className="row logs-find-row">
        <input
          id="logs-find-id"
          value={id}
          onChange={(e) => setId(e.target.value)}
          placeholder="20250101120000000abcdef012345"
          spellCheck={false}
          autoComplete="off"
          aria-describedby="logs-find-hint"
        />
        <button type="submit" disabled={busy}>
          <span>{busy ? t('requestLogs.finding') : t('requestLogs.find')}</span>
        </button>
      </div>
      <p id="logs-find-hint" className="muted logs-small">
        <span>{t('requestLogs.findHint')}</span>
      </p>
      <ActionError error={error} />
    </form>
  );
}
