// Indexing progress of one dataset (GET /api/core/dataset/trainingDetail),
// shared by its pages: the collections table and the import list read the
// same answer, polled every 1.5 s while anything is queued or indexing, or a
// large collection is being imported or deleted.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useRef } from 'react';
import { api, withQuery, type CollectionProgress, type DatasetProgress, type DatasetTrainingDetail } from '../api';
import { useLang, type Translate } from '../i18n';
import { formatClock } from '../ui';

export type TrainingDetail = DatasetTrainingDetail;
export type IndexState = 'queued' | 'indexing' | 'failed' | 'done';

export const POLL_MS = 1500;

export function stateOf(p: Pick<DatasetProgress, 'queued' | 'indexing' | 'failed'> | undefined): IndexState {
  if (!p) return 'done';
  if (p.indexing > 0) return 'indexing';
  if (p.queued > 0) return 'queued';
  return p.failed > 0 ? 'failed' : 'done';
}

export const isBusy = (
  p: (Pick<DatasetProgress, 'queued' | 'indexing'> & { collections?: Pick<CollectionProgress, 'job'>[]; job?: CollectionProgress['job'] }) | undefined,
) => !!p && (p.queued + p.indexing > 0 || !!p.job || !!p.collections?.some((c) => c.job));

/** A duration as people say it: "under a minute", "about 25 min", "about 10 h 45 min", "about 3 days 4 h". */
export function timeSpan(seconds: number, t: Translate): string {
  if (seconds < 60) return t('datasets.time.underMinute');
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return t('datasets.time.minutes', { m: minutes });
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h >= 48) return t('datasets.time.days', { d: Math.floor(h / 24), h: h % 24 });
  return m ? t('datasets.time.hours', { h, m }) : t('datasets.time.hoursOnly', { h });
}

/** The keys of a dataset's queries that indexing changes: its progress, its collections and their problem items. */
export const datasetKeys = {
  detail: (datasetId: string) => ['datasets', datasetId] as const,
  training: (datasetId: string) => ['datasets', datasetId, 'training'] as const,
  collections: (datasetId: string) => ['datasets', datasetId, 'collections'] as const,
  problems: (datasetId: string) => ['datasets', datasetId, 'problems'] as const,
};

export function loadTraining(datasetId: string, signal?: AbortSignal): Promise<TrainingDetail> {
  return api<TrainingDetail>(withQuery('/api/core/dataset/trainingDetail', { datasetId }), { signal });
}

/** A dataset's progress, read every POLL_MS while it is busy (the datasets list polls each card's with it). */
export function trainingQuery(datasetId: string) {
  return {
    queryKey: datasetKeys.training(datasetId),
    queryFn: ({ signal }: { signal: AbortSignal }) => loadTraining(datasetId, signal),
    refetchInterval: (query: { state: { data: TrainingDetail | undefined } }) => (isBusy(query.state.data) ? POLL_MS : false),
  };
}

export interface Training {
  datasetId: string;
  detail: TrainingDetail | undefined;
  /** A failed poll: shown beside the status, the last answer stays. */
  error: Error | null;
  of(collectionId: string): CollectionProgress | undefined;
  /** Something changed (an import, a retry, a delete): read the progress again, and the lists that show counts. */
  changed(): void;
  /** Read again now (while a delete runs: its progress, and the header's counts without it); the answer, or undefined when it failed. */
  refresh(): Promise<TrainingDetail | undefined>;
}

export function useTraining(datasetId: string): Training {
  const client = useQueryClient();
  // A failed poll is shown beside the status (not thrown): the header and its tabs stay.
  const { data: detail, error } = useQuery({ ...trainingQuery(datasetId), throwOnError: false });
  const busy = isBusy(detail);
  const wasBusy = useRef(busy);
  const lists = () => {
    void client.invalidateQueries({ queryKey: datasetKeys.collections(datasetId) });
    void client.invalidateQueries({ queryKey: datasetKeys.problems(datasetId) });
  };
  // Indexing just settled: chunk counts (QA makes its items late) may have changed.
  useEffect(() => {
    if (wasBusy.current && !busy) lists();
    wasBusy.current = busy;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [busy]);
  return {
    datasetId,
    detail,
    error,
    of: (id) => detail?.collections.find((c) => c.collectionId === id),
    changed: () => {
      void client.invalidateQueries({ queryKey: datasetKeys.training(datasetId) });
      lists();
    },
    refresh: () => client.fetchQuery({ ...trainingQuery(datasetId), staleTime: 0 }).catch(() => undefined),
  };
}

const TrainingContext = createContext<Training | null>(null);
export const TrainingProvider = TrainingContext.Provider;

export function useDatasetTraining(): Training {
  const t = useContext(TrainingContext);
  if (!t) throw new Error('useDatasetTraining outside a dataset page');
  return t;
}

const BADGE: Record<IndexState, string> = { queued: 'warn', indexing: 'warn', failed: 'bad', done: 'ok' };

/** The state as a badge, and the counts behind it; a dataset's (`deleting` given) says too what is being deleted, which the rest leaves out. */
export function ProgressSummary({ p }: { p: (Omit<DatasetProgress, 'deleting'> & { deleting?: number; job?: CollectionProgress['job'] }) | undefined }) {
  const { t, lang, count } = useLang();
  if (!p) return null;
  // A scan's pages being read: nothing to index yet.
  if (p.job?.kind === 'ocr')
    return (
      <span className="ds-progress">
        <span className="badge warn">{t('datasets.state.reading')}</span>
        <span className="muted">{t('datasets.collections.reading', { done: count(p.job.done), total: count(p.job.total) })}</span>
      </span>
    );
  const deleting = p.deleting ? <span className="badge warn ds-deleting">{t('datasets.progress.deleting', { n: count(p.deleting) })}</span> : null;
  if (p.total + p.queued + p.indexing + p.failed === 0)
    return <span className="ds-progress">{deleting ?? <span className="badge">{t('datasets.state.empty')}</span>}</span>;
  const state = stateOf(p);
  return (
    <span className="ds-progress">
      <span className={`badge ${BADGE[state]}`}>{t(`datasets.state.${state}`)}</span>
      <span className="muted">{t('datasets.progress.done', { done: count(p.done), total: count(p.total) })}</span>
      {p.queued > 0 && <span className="muted">{t('datasets.progress.queued', { n: count(p.queued) })}</span>}
      {p.indexing > 0 && <span className="muted">{t('datasets.progress.indexing', { n: count(p.indexing) })}</span>}
      {p.timeLeftSeconds !== null && p.timeLeftSeconds !== undefined && p.queued + p.indexing > 0 && (
        <span className="muted ds-time-left">{t('datasets.progress.timeLeft', { time: timeSpan(p.timeLeftSeconds, t) })}</span>
      )}
      {p.failed > 0 && <span className="error">{t('datasets.progress.failed', { n: count(p.failed) })}</span>}
      {p.rateLimited > 0 && p.rateLimitedUntil && (
        <span className="ds-warn">{t('datasets.progress.rateLimited', { n: count(p.rateLimited), time: formatClock(p.rateLimitedUntil, lang) })}</span>
      )}
      {deleting}
    </span>
  );
}
