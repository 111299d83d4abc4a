// The collections of a dataset: server paging and search by name, each with
// its live indexing state (the shared trainingDetail poll), the exact error
// of failed ones with a retry, its problem items opened in place (reason,
// message, attempts, next attempt, a retry each), retry of every failed item,
// and delete, whose progress a large collection shows as it goes (the shared
// poll read every half second while the delete runs, so that the dataset's
// header leaves it out at once) in place of its delete button, as it shows a
// large import's. Counts are written as the reader's language does.
import type { ListCollectionsBody, RetryFailedBody } from '@kbchat/contracts';
import { useQuery } from '@tanstack/react-query';
import { Fragment, useId, useState } from 'react';
import { Link } from 'wouter';
import { api, withQuery, type CollectionProgress, type Page, type PublicCollection } from '../api';
import { useLang } from '../i18n';
import { keepPreviousData, useDebounced } from '../query';
import { Boundary, formatTime, Loading, Pager } from '../ui';
import { ActionError } from '../actions';
import { DeleteButton } from '../actions';
import { datasetKeys, ProgressSummary, useDatasetTraining } from './training';
import { TrainingProblems } from './TrainingProblems';

const PAGE_SIZE = 20;

export function Collections({ datasetId }: { datasetId: string }) {
  const { t, count } = useLang();
  const training = useDatasetTraining();
  const [searchText, setSearchText] = useState('');
  const [offset, setOffset] = useState(0);
  const search = useDebounced(searchText.trim());
  // An import, retry or delete elsewhere, or indexing that settled, invalidates these: read again in place (no loading flash).
  const { data } = useQuery({
    queryKey: [...datasetKeys.collections(datasetId), { offset, search }],
    queryFn: ({ signal }) =>
      api<Page<PublicCollection>>('/api/core/dataset/collection/listV2', {
        json: { datasetId, offset, pageSize: PAGE_SIZE, searchText: search || undefined } satisfies ListCollectionsBody,
        signal,
      }),
    placeholderData: keepPreviousData,
  });
  const failed = training.detail?.failed ?? 0;

  return (
    <section className="stack" aria-labelledby="ds-collections-title">
      <h2 id="ds-collections-title">{t('datasets.tab.collections')}</h2>
      <div className="toolbar">
        <label className="grow ds-search">
          <span>{t('datasets.collections.search')}</span>
          <input
            type="search"
            value={searchText}
            onChange={(e) => {
              setSearchText(e.target.value);
              setOffset(0);
            }}
          />
        </label>
        {failed > 0 && <RetryButton body={{ datasetId }} label={t('datasets.retryAll', { n: count(failed) })} />}
      </div>
      {!data ? (
        <Loading />
      ) : data.list.length === 0 ? (
        <p className="muted">
          <span>{search ? t('datasets.collections.noneFound') : t('datasets.collections.empty')}</span>
          <span> </span>
          {!search && <Link href="/import">{t('datasets.collections.importFirst')}</Link>}
        </p>
      ) : (
        <>
          <p className="muted">
            <span>{t('datasets.collections.total', { n: count(data.total) })}</span>
          </p>
          <div className="table-wrap">
            <table className="ds-collections">
              <thead>
                <tr>
                  <th>{t('common.name')}</th>
                  <th>{t('datasets.collections.chunks')}</th>
                  <th>{t('datasets.collections.status')}</th>
                  <th>{t('datasets.collections.actions')}</th>
                </tr>
              </thead>
              <tbody>
                {data.list.map((c) => (
                  <CollectionRow key={c._id} c={c} p={training.of(c._id)} />
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} pageSize={PAGE_SIZE} total={data.total} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}

/**
 * How far a delete of this collection got: read while it runs (the platform's
 * delete answers once it is done). A failure is kept to show (the delete
 * button, gone while it ran, is back).
 */
function useDeleteProgress(c: PublicCollection) {
  const training = useDatasetTraining();
  const [removing, setRemoving] = useState<{ done: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  async function remove() {
    setError(null);
    setRemoving({ done: 0, total: c.dataAmount ?? 0 });
    const poll = setInterval(() => {
      void training.refresh().then((d) => {
        const job = d?.collections.find((x) => x.collectionId === c._id)?.job;
        if (job?.kind === 'delete') setRemoving({ done: job.done, total: job.total });
      });
    }, 500);
    try {
      await api(withQuery('/api/core/dataset/collection/delete', { id: c._id }), { method: 'DELETE' });
    } catch (err) {
      setRemoving(null);
      setError(err);
      return;
    } finally {
      clearInterval(poll);
    }
    // The row stays as it is until the list is read again without it.
    training.changed();
  }
  return { removing, error, remove };
}

/** A large import or delete going on: how far, as a bar and in words. */
function JobProgress({ name, kind, done, total }: { name: string; kind: 'import' | 'delete' | 'ocr'; done: number; total: number }) {
  const { t, count } = useLang();
  const counts = { done: count(done), total: count(total) };
  const words =
    kind === 'import'
      ? t('datasets.collections.importing', counts)
      : kind === 'ocr'
        ? t('datasets.collections.reading', counts)
        : total > 0 && done >= total
          ? t('datasets.collections.freeing')
          : t('datasets.collections.deleting', counts);
  return (
    <div className="ds-bar ds-job" role="status">
      <progress
        aria-label={t(
          kind === 'import' ? 'datasets.collections.importingOf' : kind === 'ocr' ? 'datasets.collections.readingOf' : 'datasets.collections.deletingOf',
          { name },
        )}
        max={total || 1}
        value={done}
      />
      <span className="muted">{words}</span>
    </div>
  );
}

function CollectionRow({ c, p }: { c: PublicCollection; p: CollectionProgress | undefined }) {
  const { t, lang, count } = useLang();
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const { removing, error: deleteError, remove } = useDeleteProgress(c);
  const job = removing ? { kind: 'delete' as const, ...removing } : p?.job;
  // Being deleted (here, or from another page): its progress says so; nothing to delete, retry or ask.
  const deleting = job?.kind === 'delete';
  // Failed items, or any waiting on an error (the last error of an open item).
  const hasProblems = !!p && (p.failed > 0 || !!p.lastError);
  return (
    <Fragment>
      <tr>
        <td>
          <div className="ds-name">
            <Link href={`/collections/${encodeURIComponent(c._id)}`}>{c.name}</Link>
          </div>
          <div className="muted ds-small">
            <span>{t(`datasets.type.${c.type === 'file' || c.type === 'link' ? c.type : 'text'}`)}</span>
            <span> · </span>
            <span>{c.trainingType === 'qa' ? t('datasets.chunking.qa') : t('datasets.chunking.chunk')}</span>
            <span> · </span>
            <span>{formatTime(c.createTime, lang)}</span>
          </div>
        </td>
        <td data-label={t('datasets.collections.chunks')}>
          <span>{count(c.dataAmount ?? 0)}</span>
        </td>
        <td data-label={t('datasets.collections.status')}>
          {job ? <JobProgress name={c.name} {...job} /> : <ProgressSummary p={p} />}
          {p?.lastError && !open && (
            <p className={p.failed > 0 ? 'error ds-error-text' : 'muted ds-error-text'}>
              <span>{p.lastError}</span>
            </p>
          )}
          {(hasProblems || open) && (
            <button
              type="button"
              className="link ds-problems-toggle"
              aria-expanded={open}
              aria-controls={open ? panelId : undefined}
              aria-label={t('datasets.problems.showNamed', { name: c.name })}
              onClick={() => setOpen(!open)}
            >
              <span>{t('datasets.problems.show')}</span>
              <span aria-hidden="true">{open ? ' ▴' : ' ▾'}</span>
            </button>
          )}
        </td>
        <td>
          {!deleting && (
            <div className="ds-actions">
              {p && p.failed > 0 && <RetryButton body={{ collectionId: c._id }} label={t('datasets.retry')} name={c.name} />}
              <DeleteButton name={c.name} onDelete={remove} />
            </div>
          )}
          <ActionError error={deleteError} />
        </td>
      </tr>
      {open && (
        <tr className="ds-problems-row">
          <td colSpan={4}>
            <Boundary>
              <TrainingProblems collectionId={c._id} name={c.name} id={panelId} />
            </Boundary>
          </td>
        </tr>
      )}
    </Fragment>
  );
}

/** Failed items queued again (a collection's, or the whole dataset's); the poll then shows them move. */
export function RetryButton({ body, label, name }: { body: RetryFailedBody; label: string; name?: string }) {
  const { t } = useLang();
  const training = useDatasetTraining();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function retry() {
    setBusy(true);
    setError(null);
    try {
      await api('/api/core/dataset/training/retry', { json: body });
      training.changed();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <span className="ds-retry">
      <button type="button" className="secondary" disabled={busy} onClick={retry} aria-label={name ? t('datasets.retryNamed', { name }) : undefined}>
        <span>{label}</span>
      </button>
      <ActionError error={error} />
    </span>
  );
}
