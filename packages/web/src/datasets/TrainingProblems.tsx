// A collection's problem items, opened in place under its row of the
// collections table (POST /api/core/dataset/training/getTrainingError): each
// with its reason, the exact message, "attempt n of max", when it is tried
// again, and a retry of that one item. Paged by the platform.
import type { TrainingErrorsBody, UpdateTrainingDataBody } from '@kbchat/contracts';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, type IndexingReason, type Page, type PublicTrainingError } from '../api';
import { ActionError } from '../actions';
import { useLang } from '../i18n';
import { keepPreviousData } from '../query';
import { formatClock, Loading, Pager } from '../ui';
import { datasetKeys, isBusy, POLL_MS, useDatasetTraining } from './training';

const PAGE_SIZE = 10;
/** A rate limit passes by itself; every other reason needs someone to look. */
const REASON_BADGE: Record<IndexingReason, string> = { rate_limited: 'warn', model_missing: 'bad', parse_failure: 'bad', upstream_error: 'bad', other: 'bad' };

export function TrainingProblems({ collectionId, name, id }: { collectionId: string; name: string; id: string }) {
  const { t, count } = useLang();
  const training = useDatasetTraining();
  const [offset, setOffset] = useState(0);
  // The list follows the queue: read again at the shared poll's rate while the collection is busy, and after any change (invalidated).
  const { data } = useQuery({
    queryKey: [...datasetKeys.problems(training.datasetId), collectionId, { offset }],
    queryFn: ({ signal }) =>
      api<Page<PublicTrainingError>>('/api/core/dataset/training/getTrainingError', {
        json: { collectionId, offset, pageSize: PAGE_SIZE } satisfies TrainingErrorsBody,
        signal,
      }),
    placeholderData: keepPreviousData,
    refetchInterval: isBusy(training.of(collectionId)) ? POLL_MS : false,
  });
  // Retries emptied this page: show the one before.
  useEffect(() => {
    if (data && offset > 0 && offset >= data.total) setOffset(Math.max(0, offset - PAGE_SIZE));
  }, [data, offset]);

  return (
    <section className="ds-problems" id={id} aria-label={t('datasets.problems.title', { name })}>
      {!data ? (
        <Loading />
      ) : data.total === 0 ? (
        <p className="muted">
          <span>{t('datasets.problems.none')}</span>
        </p>
      ) : (
        <>
          <p className="muted ds-small">
            <span>{t('datasets.problems.total', { n: count(data.total) })}</span>
          </p>
          <ul className="ds-problem-list">
            {data.list.map((item) => (
              <ProblemItem key={item._id} item={item} onRetried={() => training.changed()} />
            ))}
          </ul>
          <Pager offset={offset} pageSize={PAGE_SIZE} total={data.total} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}

function ProblemItem({ item, onRetried }: { item: PublicTrainingError; onRetried: () => void }) {
  const { t, lang, count } = useLang();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const chunk = item.chunkIndex === null ? null : item.chunkIndex + 1;

  async function retry() {
    setBusy(true);
    setError(null);
    try {
      await api('/api/core/dataset/training/updateTrainingData', { method: 'PUT', json: { dataId: item._id } satisfies UpdateTrainingDataBody });
      onRetried();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const attempts =
    item.attempts > 0
      ? t('datasets.problems.attempt', { n: count(item.attempts), max: count(item.maxAttempts) })
      : t('datasets.problems.noAttempt', { max: count(item.maxAttempts) });
  const when =
    item.status === 'failed'
      ? t('datasets.problems.failed')
      : item.status === 'indexing'
        ? t('datasets.problems.indexing')
        : item.nextAttemptAt && Date.parse(item.nextAttemptAt) > Date.now()
          ? t('datasets.problems.nextAt', { time: formatClock(item.nextAttemptAt, lang) })
          : t('datasets.problems.dueNow');
  return (
    <li className="ds-problem">
      <div className="ds-problem-head">
        <span className={`badge ${REASON_BADGE[item.reason]}`}>{t(`datasets.reason.${item.reason}`)}</span>
        <strong>{chunk === null ? `#${item._id}` : t('datasets.chunks.number', { n: chunk })}</strong>
        <span className="muted">{attempts}</span>
        <span className={item.status === 'failed' ? 'error' : 'muted'}>{when}</span>
      </div>
      {item.q && (
        <p className="ds-text ds-problem-preview muted">
          <span>{item.q}</span>
        </p>
      )}
      <p className="error ds-error-text">
        <span>{item.errorMsg}</span>
      </p>
      <p className="muted ds-small ds-problem-hint">
        <span>{t(`datasets.reasonHint.${item.reason}`)}</span>
      </p>
      {item.status !== 'indexing' && (
        <div className="ds-retry">
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={retry}
            aria-label={chunk === null ? t('datasets.problems.retryId', { id: item._id }) : t('datasets.problems.retryItem', { n: chunk })}
          >
            <span>{t('datasets.retry')}</span>
          </button>
          <ActionError error={error} />
        </div>
      )}
    </li>
  );
}
