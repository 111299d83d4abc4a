// "Run all" for a dataset's checks: starts a run, shows its progress while it
// goes on in the platform, then the difference to the run before it, newly
// failing checks first. The latest run is shown when the page opens.
import type { RunChecksBody } from '@kbchat/contracts';
import { useState } from 'react';
import { api, withQuery, type CheckRun as Run, type RunDiff } from '../api';
import { ActionError } from '../actions';
import { useLang } from '../i18n';
import { formatTime, usePoll, useLoad } from '../ui';
import { CheckDiffView } from './CheckDiff';

type RunAnswer = { run: Run | null; diff: RunDiff | null };
const POLL_MS = 500;

export function CheckRunPanel({ datasetId, count, onRan }: { datasetId: string; count: number; onRan: () => void }) {
  const { t, lang, count: inWords } = useLang();
  const { data: loaded } = useLoad(() => api<RunAnswer>(withQuery('/api/core/dataset/check/run', { datasetId })), [datasetId]);
  const [latest, setLatest] = useState<RunAnswer | null>(null);
  const [starting, setStarting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const shown = latest ?? loaded;
  const running = shown?.run?.status === 'running';

  usePoll(
    async () => {
      try {
        const next = await api<RunAnswer>(withQuery('/api/core/dataset/check/run', { id: shown!.run!.id }));
        setLatest(next);
        if (next.run?.status !== 'running') onRan();
      } catch (err) {
        setError(err);
      }
    },
    POLL_MS,
    running,
  );

  async function runAll() {
    setStarting(true);
    setError(null);
    try {
      const { runId } = await api<{ runId: string }>('/api/core/dataset/check/run', { json: { datasetId } satisfies RunChecksBody });
      setLatest(await api<RunAnswer>(withQuery('/api/core/dataset/check/run', { id: runId })));
    } catch (err) {
      setError(err);
    } finally {
      setStarting(false);
    }
  }

  const run = shown?.run;
  return (
    <section className="card stack" aria-labelledby="ck-run-title">
      <div className="row ck-run-head">
        <h3 id="ck-run-title">{t('checks.run.title')}</h3>
        <button type="button" onClick={runAll} disabled={starting || running || count === 0}>
          <span>{t('checks.runAll', { n: inWords(count) })}</span>
        </button>
      </div>
      <ActionError error={error} />
      {running && run && (
        <div className="ds-bar" aria-live="polite">
          <span>{t('checks.running', { done: inWords(run.done), total: inWords(run.total) })}</span>
          <progress max={run.total} value={run.done} aria-label={t('checks.runProgress')} />
        </div>
      )}
      {!run && (
        <p className="muted">
          <span>{t('checks.notRun')}</span>
        </p>
      )}
      {run?.status === 'interrupted' && (
        <p className="error">
          <span>{t('checks.run.interrupted', { time: formatTime(run.startedAt, lang), done: inWords(run.done), total: inWords(run.total) })}</span>
        </p>
      )}
      {run?.status === 'done' && (
        <>
          <p className="row">
            <span className={`badge ${run.passed === run.total ? 'ok' : 'bad'}`}>{t('checks.run.at', { time: formatTime(run.startedAt, lang), passed: inWords(run.passed), total: inWords(run.total) })}</span>
            <span className="muted ds-small">{t('checks.run.model', { model: run.vectorModel || t('datasets.noModel') })}</span>
            <span className="muted ds-small">{t('checks.run.chunks', { chunks: inWords(run.chunking.chunks), collections: inWords(run.chunking.collections) })}</span>
            {run.chunking.pending > 0 && <span className="badge warn">{t('checks.run.pending', { n: inWords(run.chunking.pending) })}</span>}
          </p>
          {shown?.diff && <CheckDiffView diff={shown.diff} />}
        </>
      )}
    </section>
  );
}
