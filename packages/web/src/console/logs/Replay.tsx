// The Replay button of a failed request, and what it answered beside what
// failed: the old status and error on one side, the new status and answer
// (a stream's payloads joined into its text, the raw payloads behind a
// toggle) on the other, with a link to the replay's own log row.
import { useState } from 'react';
import { Link } from 'wouter';
import type { PublicLogDetail, ReplayResult } from '@kbchat/contracts';
import { ActionError } from '../../actions';
import { useLang, type Translate } from '../../i18n';
import { gatewayApi } from '../gateway-api';
import { readAnswer, type ReadAnswer } from './answer';
import { failed } from './parts';

export function Replay({ log }: { log: PublicLogDetail }) {
  const { t } = useLang();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ReplayResult | null>(null);
  const [error, setError] = useState<unknown>(null);

  const replay = async () => {
    setBusy(true);
    setError(null);
    try {
      setResult(await gatewayApi<ReplayResult>(`/api/logs/${encodeURIComponent(log.request_id)}/replay`, { method: 'POST' }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="stack">
      <div className="row">
        <button type="button" onClick={replay} disabled={busy}>
          <span>{busy ? t('requestLogs.replaying') : t('requestLogs.replay')}</span>
        </button>
        <span className="muted logs-small">{t('requestLogs.replayHint')}</span>
      </div>
      <ActionError error={error} />
      {result && <Comparison log={log} result={result} />}
    </div>
  );
}

function Comparison({ log, result }: { log: PublicLogDetail; result: ReplayResult }) {
  const { t } = useLang();
  const answer = readAnswer(result);
  const payloads = result.stream && Array.isArray(result.response) ? result.response : null;
  return (
    <section className="logs-compare" aria-label={t('requestLogs.replay.title')}>
      <article className="logs-side" aria-label={t('requestLogs.replay.before')}>
        <h3>{t('requestLogs.replay.before')}</h3>
        <p className="row">
          <span className={`badge ${failed(log) ? 'bad' : 'ok'}`}>{t('requestLogs.replay.status', { status: log.status })}</span>
          <span>{t(failed(log) ? 'requestLogs.replay.failed' : 'requestLogs.replay.ok')}</span>
        </p>
        <pre className="logs-pre logs-error-pre">
          <span>{log.error ?? ''}</span>
        </pre>
      </article>
      <article className="logs-side" aria-label={t('requestLogs.replay.after')}>
        <h3>{t('requestLogs.replay.after')}</h3>
        <p className="row">
          <span className={`badge ${answer.ok ? 'ok' : 'bad'}`}>{t('requestLogs.replay.status', { status: result.status })}</span>
          <span>{t(answer.ok ? 'requestLogs.replay.ok' : 'requestLogs.replay.failed')}</span>
          {result.stream && <span className="badge">{t('requestLogs.replay.stream')}</span>}
        </p>
        <pre className={`logs-pre ${answer.ok ? '' : 'logs-error-pre'}`} data-testid="replay-answer">
          <span>{answer.text || summaryText(answer.summary, t) || t('requestLogs.replay.noText')}</span>
        </pre>
        <p>
          <Link href={`/${encodeURIComponent(result.request_id)}`}>{t('requestLogs.replay.open', { id: result.request_id })}</Link>
        </p>
        <details className="logs-raw">
          <summary>
            <span>{payloads ? t('requestLogs.replay.payloads', { n: payloads.length }) : t('requestLogs.replay.raw')}</span>
          </summary>
          {payloads ? (
            <ol className="logs-payloads" translate="no">
              {payloads.map((p, i) => (
                <li key={i}>
                  <code>{typeof p === 'string' ? p : JSON.stringify(p)}</code>
                </li>
              ))}
            </ol>
          ) : (
            <pre className="logs-pre" translate="no">
              <code>{typeof result.response === 'string' ? result.response : JSON.stringify(result.response, null, 2)}</code>
            </pre>
          )}
        </details>
      </article>
    </section>
  );
}

function summaryText(summary: ReadAnswer['summary'], t: Translate): string {
  if (!summary) return '';
  return summary.kind === 'embeddings'
    ? t('requestLogs.replay.embeddings', { count: summary.count, dims: summary.dims })
    : t('requestLogs.replay.rerank', { count: summary.count });
}
