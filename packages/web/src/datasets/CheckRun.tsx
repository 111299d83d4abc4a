// "Run all" for a dataset's checks: starts a run, shows its progress while it
// goes on in the platform, then the difference to the run before it, newly
// failing checks first. The latest run is shown when the page opens.
import type { RunChecksBody } from '@kbchat/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, withQuery, type CheckRunAnswer as RunAnswer, type CheckRunStarted } from '../api';
import { ActionError } from '../actions';
import { useLang } from '../i18n';
import { formatTime } from '../ui';
import { CheckDiffView } from './CheckDiff';

const POLL_MS = 500;

const loadRun = (params: { datasetId: string } | { id: string }, signal?: AbortSignal) =>
  api<RunAnswer>(withQuery('/api/core/dataset/check/run', params), { signal });

export function CheckRunPanel({ datasetId, count, onRan }: { datasetId: string; count: number; onRan: () => void }) {
  const { t, lang, count: inWords } = useLang();
  const client = useQueryClient();
  const runKey = (id: string) => ['datasets', datasetId, 'check-runs', id];
  // The latest run when the page opens; then the one "Run all" started.
  const { data: loaded } = useQuery({ queryKey: ['datasets', datasetId, 'check-runs', 'latest'], queryFn: ({ signal }) => loadRun({ datasetId }, signal) });
  const [started, setStarted] = useState<string | null>(null);
  const start = useMutation({
    mutationFn: async () => {
      const { runId } = await api<CheckRunStarted>('/api/core/dataset/check/run', { json: { datasetId } satisfies RunChecksBody });
      return loadRun({ id: runId });
    },
    onSuccess: (answer) => {
      if (!answer.run) return;
      client.setQueryData(runKey(answer.run.id), answer);
      setStarted(answer.run.id);
    },
  });
  // A run going on (started here, or found running when the page opened) is read every POLL_MS until it ends; a failed read shows beside the button.
  const followed = started ?? (loaded?.run?.status === 'running' ? loaded.run.id : null);
  const poll = useQuery({
    queryKey: runKey(followed ?? ''),
    queryFn: ({ signal }) => loadRun({ id: followed! }, signal),
    enabled: followed !== null,
    throwOnError: false,
    refetchInterval: (query) => (query.state.data?.run?.status === 'running' ? POLL_MS : false),
  });
  const shown = (followed !== null ? poll.data : undefined) ?? loaded;
  const running = shown?.run?.status === 'running';
  const error = start.error ?? poll.error;
  // The run ended: its results are the checks' new "last".
  const ended = followed !== null && !!poll.data?.run && poll.data.run.status !== 'running';
  useEffect(() => {
    if (ended) onRan();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ended]);

  const runAll = () => start.mutate();
  const starting = start.isPending;

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
            <span className={`badge ${run.passed === run.total ? 'ok' : 'bad'}`}>
              {t('checks.run.at', { time: formatTime(run.startedAt, lang), passed: inWords(run.passed), total: inWords(run.total) })}
            </span>
            <span className="muted ds-small">{t('checks.run.model', { model: run.vectorModel || t('datasets.noModel') })}</span>
            <span className="muted ds-small">
              {t('checks.run.chunks', { chunks: inWords(run.chunking.chunks), collections: inWords(run.chunking.collections) })}
            </span>
            {run.chunking.pending > 0 && <span className="badge warn">{t('checks.run.pending', { n: inWords(run.chunking.pending) })}</span>}
          </p>
          {shown?.diff && <CheckDiffView diff={shown.diff} />}
        </>
      )}
    </section>
  );
}
