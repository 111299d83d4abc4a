// One file of the import list: its upload bar, then its indexing progress
// read from the shared poll, or why it failed, was skipped, or is asked about.
import { useLang } from '../i18n';
import { formatBytes } from '../ui';
import { ActionError } from '../actions';
import { RetryButton } from './Collections';
import type { FileItem } from './FileImport';
import { ProgressSummary, stateOf, useDatasetTraining } from './training';

export function FileRow({ item, onRetry, onAnswer }: { item: FileItem; onRetry: () => void; onAnswer: (importAgain: boolean) => void }) {
  const { t } = useLang();
  const name = item.file.name;
  return (
    <li className="card ds-file" aria-label={name}>
      <div className="ds-file-head">
        <strong className="ds-name">{name}</strong>
        <span className="muted">{formatBytes(item.file.size)}</span>
      </div>
      {item.phase === 'checking' && (
        <p className="muted">
          <span>{t('datasets.upload.checking')}</span>
        </p>
      )}
      {item.phase === 'waiting' && (
        <p className="muted">
          <span>{t('datasets.upload.waiting')}</span>
        </p>
      )}
      {item.phase === 'uploading' && (
        <div className="ds-bar">
          <progress aria-label={t('datasets.upload.bytesOf', { name })} max={item.file.size || 1} value={item.loaded} />
          <span className="muted">{t('datasets.upload.bytes', { loaded: formatBytes(item.loaded), total: formatBytes(item.file.size) })}</span>
        </div>
      )}
      {item.phase === 'uploaded' && <Indexing item={item} />}
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
          <span>{item.reason === 'inList' ? t('datasets.upload.skippedInList') : t('datasets.upload.skipped')}</span>
        </p>
      )}
      {item.phase === 'ask' && (
        <div className="notice warn stack" role="group" aria-label={t('datasets.upload.duplicate', { name })}>
          <span>{t('datasets.upload.duplicate', { name })}</span>
          <div className="row">
            <button type="button" className="secondary" onClick={() => onAnswer(false)}>
              <span>{t('datasets.upload.skip')}</span>
            </button>
            <button type="button" className="secondary" onClick={() => onAnswer(true)}>
              <span>{t('datasets.upload.importAgain')}</span>
            </button>
          </div>
        </div>
      )}
    </li>
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
