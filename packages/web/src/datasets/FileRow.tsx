// One file of the import list: hashing, its upload bar (and where a resumed
// upload started), then its indexing progress read from the shared poll; or
// that its content is imported already (with a link, and a second copy on
// request), or why it failed. And the uploads a reload interrupted.
import { Link } from 'wouter';
import type { UnfinishedUpload } from '../api';
import { useLang } from '../i18n';
import { formatBytes } from '../ui';
import { ActionError, DeleteButton } from '../actions';
import { RetryButton } from './Collections';
import type { FileItem } from './FileImport';
import { ProgressSummary, stateOf, useDatasetTraining } from './training';

export function FileRow({ item, onRetry, onSecondCopy }: { item: FileItem; onRetry: () => void; onSecondCopy: () => void }) {
  const { t } = useLang();
  const name = item.file.name;
  const note = (text: string) => (
    <p className="muted">
      <span>{text}</span>
    </p>
  );
  return (
    <li className="card ds-file" aria-label={name}>
      <div className="ds-file-head">
        <strong className="ds-name">{name}</strong>
        <span className="muted">{formatBytes(item.file.size)}</span>
      </div>
      {item.phase === 'hashing' && note(t('datasets.upload.checking'))}
      {item.phase === 'waiting' && note(item.resumedFrom ? `${t('datasets.upload.waiting')} · ${t('datasets.upload.resumedFrom', { loaded: formatBytes(item.resumedFrom) })}` : t('datasets.upload.waiting'))}
      {item.phase === 'uploading' && (
        <div className="ds-bar">
          <progress aria-label={t('datasets.upload.bytesOf', { name })} max={item.file.size || 1} value={item.loaded} />
          <span className="muted">
            <span>{t('datasets.upload.bytes', { loaded: formatBytes(item.loaded), total: formatBytes(item.file.size) })}</span>
            {item.resumedFrom ? <span>{` · ${t('datasets.upload.resumedFrom', { loaded: formatBytes(item.resumedFrom) })}`}</span> : null}
          </span>
        </div>
      )}
      {item.phase === 'importing' && note(t('datasets.upload.uploaded'))}
      {item.phase === 'uploaded' && <Indexing item={item} />}
      {item.phase === 'already' && item.existing && (
        <div className="notice stack ds-already" role="status">
          <span>
            <span>{t('datasets.upload.already')}</span> <Link href={`/collections/${encodeURIComponent(item.existing.id)}`}>{item.existing.name}</Link>
          </span>
          <div className="row">
            <button type="button" className="secondary" onClick={onSecondCopy}>
              <span>{t('datasets.upload.secondCopy')}</span>
            </button>
          </div>
        </div>
      )}
      {item.phase === 'failed' && (
        <div className="row">
          <span className="badge bad">{t('datasets.upload.failed')}</span>
          <ActionError error={item.error} />
          <button type="button" className="secondary" onClick={onRetry} aria-label={t('datasets.upload.retryNamed', { name })}>
            <span>{t('datasets.retry')}</span>
          </button>
        </div>
      )}
      {item.phase === 'skipped' && (
        <p className="notice">
          <span>{t('datasets.upload.skippedInList')}</span>
        </p>
      )}
    </li>
  );
}

/** Uploads left unfinished (a reload, a closed tab): the file must be chosen again to continue. */
export function InterruptedUploads({ uploads, onDiscard }: { uploads: UnfinishedUpload[]; onDiscard: (u: UnfinishedUpload) => Promise<void> }) {
  const { t } = useLang();
  return (
    <section className="notice warn stack ds-interrupted" aria-labelledby="ds-interrupted-title">
      <h4 id="ds-interrupted-title">{t('datasets.upload.interrupted')}</h4>
      <p>
        <span>{t('datasets.upload.interruptedWhy')}</span>
      </p>
      <ul className="ds-files" aria-label={t('datasets.upload.interrupted')}>
        {uploads.map((u) => (
          <li key={u.uploadId} className="ds-file-head" aria-label={u.fileName}>
            <span>
              <strong className="ds-name">{u.fileName}</strong>
              <span className="muted">{` · ${t('datasets.upload.bytes', { loaded: formatBytes(u.offset), total: formatBytes(u.size) })}`}</span>
            </span>
            <DeleteButton name={u.fileName} onDelete={() => onDiscard(u)} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function Indexing({ item }: { item: FileItem }) {
  const { t } = useLang();
  const training = useDatasetTraining();
  const p = training.of(item.collectionId!);
  const state = stateOf(p);
  return (
    <div className="stack ds-indexing">
      <div className="ds-bar">
        <progress aria-label={t('datasets.upload.indexingOf', { name: item.file.name })} max={p?.total || 1} value={p ? p.done : 0} />
        {p ? <ProgressSummary p={p} /> : <span className="muted">{t('datasets.upload.uploaded')}</span>}
      </div>
      {p?.lastError && (
        <p className={state === 'failed' ? 'error ds-error-text' : 'muted ds-error-text'}>
          <span>{p.lastError}</span>
        </p>
      )}
      {p && p.failed > 0 && <RetryButton body={{ collectionId: item.collectionId }} label={t('datasets.retry')} name={item.file.name} />}
    </div>
  );
}
