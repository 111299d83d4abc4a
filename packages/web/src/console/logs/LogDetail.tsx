// /logs/<requestId>: every field of one request; for a failed one the body
// kept for replay (what went upstream, or before translation for an Anthropic
// or Gemini channel) and a Replay that shows the new answer beside the old
// error. The address is the request's own, so it can be shared.
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from 'wouter';
import type { PublicLogDetail } from '@kbchat/contracts';
import { ApiError } from '../../api';
import { useLang } from '../../i18n';
import { CopyButton, Loading } from '../../ui';
import { formatUnits, gatewayApi } from '../gateway-api';
import { prettyJson } from './answer';
import { lastListQuery, queryOf } from './query';
import { failed, FallbackFor, formatLogTime, NameOf } from './parts';
import { Replay } from './Replay';

/** The detail, or null when no row has this id (a 404; other failures go to the boundary with the API's message). */
async function loadDetail(requestId: string, signal: AbortSignal): Promise<PublicLogDetail | null> {
  try {
    return await gatewayApi<PublicLogDetail>(`/api/logs/${encodeURIComponent(requestId)}`, { signal });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export function LogDetail({ requestId }: { requestId: string }) {
  const { t, lang } = useLang();
  const { data } = useQuery({ queryKey: ['logs', 'detail', requestId], queryFn: ({ signal }) => loadDetail(requestId, signal) });
  const back = `~/logs${lastListQuery()}`;
  const crumbs = (
    <nav aria-label={t('requestLogs.detail.breadcrumb')} className="logs-breadcrumb">
      <Link href={back}>{t('requestLogs.title')}</Link>
      <span aria-hidden="true">›</span>
      <span>{requestId}</span>
    </nav>
  );
  if (data === undefined) return <Loading />;
  if (data === null)
    return (
      <section className="stack logs-page">
        {crumbs}
        <p role="alert" className="error">
          <span>{t('requestLogs.detail.notFound', { id: requestId })}</span>
        </p>
        <p>
          <Link href={back}>{t('requestLogs.detail.back')}</Link>
        </p>
      </section>
    );

  const r = data;
  const none = t('requestLogs.none.value');
  const ms = (n: number | null) => (n === null ? none : t('requestLogs.ms', { n: n.toLocaleString() }));
  const filterLink = (f: Record<string, string>) => `~/logs${queryOf(f)}`;
  const fields: [string, ReactNode][] = [
    [t('requestLogs.field.time'), <span title={new Date(r.created_at).toISOString()}>{formatLogTime(r.created_at, lang)}</span>],
    [t('requestLogs.field.requestId'), <code>{r.request_id}</code>],
    [t('requestLogs.col.user'), <NameOf id={r.user_id} name={r.user_name} href={r.user_id ? filterLink({ user_id: String(r.user_id) }) : undefined} />],
    [t('requestLogs.col.token'), <NameOf id={r.token_id} name={r.token_name} href={r.token_id ? filterLink({ token_id: String(r.token_id) }) : undefined} />],
    [
      t('requestLogs.col.channel'),
      <NameOf id={r.channel_id} name={r.channel_name} href={r.channel_id ? filterLink({ channel_id: String(r.channel_id) }) : undefined} />,
    ],
    [t('requestLogs.field.endpoint'), <code>{r.endpoint}</code>],
    [
      t('requestLogs.col.model'),
      <>
        <Link href={filterLink({ model: r.model })}>{r.model}</Link>
        {r.requested_model !== null && <FallbackFor model={r.requested_model} badge />}
      </>,
    ],
    [t('requestLogs.field.upstreamModel'), <span>{r.upstream_model ?? none}</span>],
    [t('requestLogs.col.stream'), <span>{t(r.is_stream ? 'requestLogs.yes' : 'requestLogs.no')}</span>],
    [t('requestLogs.col.status'), <span className={`badge ${failed(r) ? 'bad' : 'ok'}`}>{r.status}</span>],
    [t('requestLogs.field.promptTokens'), <span>{r.prompt_tokens.toLocaleString()}</span>],
    [t('requestLogs.field.completionTokens'), <span>{r.completion_tokens.toLocaleString()}</span>],
    [t('requestLogs.field.usageSource'), <code>{r.usage_source}</code>],
    [t('requestLogs.col.cost'), <span>{formatUnits(r.cost)}</span>],
    [t('requestLogs.field.costMicros'), <span>{r.cost_micros.toLocaleString()}</span>],
    [t('requestLogs.field.latency'), <span>{ms(r.latency_ms)}</span>],
    [t('requestLogs.field.ttft'), <span>{ms(r.ttft_ms)}</span>],
    [t('requestLogs.col.attempts'), <span>{r.attempts}</span>],
    [t('requestLogs.field.logId'), <span>{`#${r.id}`}</span>],
  ];

  return (
    <section className="stack logs-page">
      {crumbs}
      <div className="row logs-detail-head">
        <h1>{t('requestLogs.detail.title', { id: r.request_id })}</h1>
        <CopyButton text={window.location.href} />
      </div>
      <dl className="card logs-fields">
        {fields.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {r.error && (
        <div className="card stack">
          <h2>{t('requestLogs.field.error')}</h2>
          <pre className="logs-pre logs-error-pre">
            <span>{r.error}</span>
          </pre>
        </div>
      )}
      {r.request_body !== null ? (
        <div className="card stack">
          <div className="row logs-detail-head">
            <h2>{t('requestLogs.body.title')}</h2>
            <CopyButton text={r.request_body} />
          </div>
          <pre className="logs-pre" aria-label={t('requestLogs.body.title')} tabIndex={0} translate="no">
            <code>{prettyJson(r.request_body)}</code>
          </pre>
          <p className="muted">
            <span>{t('requestLogs.body.hint')}</span>
          </p>
          <Replay log={r} />
        </div>
      ) : (
        <p className="muted">
          <span>{t(failed(r) ? 'requestLogs.body.notKept' : 'requestLogs.body.none')}</span>
        </p>
      )}
    </section>
  );
}
