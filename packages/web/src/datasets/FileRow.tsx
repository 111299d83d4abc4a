// One file of the import list: hashing, its upload bar (and where a resumed
// upload started), what a large one would cost (import it or not; the speed
// it is timed at says what measured it and how long ago), then its
// indexing progress read from the shared poll; or that its content is
// imported already (with a link, and a second copy on request), or why it was
// not imported, with a retry only where one can help. And the uploads a
// reload interrupted.
import { Link } from 'wouter';
import type { UnfinishedUpload, UploadEstimate } from '../api';
import { useEffect, useState } from 'react';
import { useLang } from '../i18n';
import { formatBytes } from '../ui';
import { DeleteButton } from '../actions';
import { RetryButton } from './Collections';
import type { FileItem } from './file-item';
import { ProgressSummary, stateOf, timeSpan, useDatasetTraining } from './training';
import { uploadProblem } from './upload-errors';
import { rateOrigin } from './estimate-words';

interface RowActions {
  onRetry: () => void;
  /** None: a second copy cannot be sent from here (no file: the upload came back after a reload). */
  onSecondCopy?: () => void;
  onConfirm: () => void;
  onCancel: () => void;
}

export function FileRow({ item, maxBytes, onRetry, onSecondCopy, onConfirm, onCancel }: { item: FileItem; maxBytes: string } & RowActions) {
  const { t } = useLang();
  const name = item.name;
  const note = (text: string) => (
    <p className="muted">
      <span>{text}</span>
    </p>
  );
  return (
    <li className="card ds-file" aria-label={name}>
      <div className="ds-file-head">
        <strong className="ds-name">{name}</strong>
        <span className="muted">{formatBytes(item.size)}</span>
      </div>
      {item.phase === 'hashing' && note(t('datasets.upload.checking'))}
      {item.phase === 'waiting' &&
        note(
          item.resumedFrom
            ? `${t('datasets.upload.waiting')} · ${t('datasets.upload.resumedFrom', { loaded: formatBytes(item.resumedFrom) })}`
            : t('datasets.upload.waiting'),
        )}
      {item.phase === 'uploading' && (
        <div className="ds-bar">
          <progress aria-label={t('datasets.upload.bytesOf', { name })} max={item.size || 1} value={item.loaded} />
          <span className="muted">
            <span>{t('datasets.upload.bytes', { loaded: formatBytes(item.loaded), total: formatBytes(item.size) })}</span>
            {item.resumedFrom ? <span>{` · ${t('datasets.upload.resumedFrom', { loaded: formatBytes(item.resumedFrom) })}`}</span> : null}
          </span>
        </div>
      )}
      {item.phase === 'estimating' && note(t('datasets.upload.estimating'))}
      {item.phase === 'confirm' && item.estimate && (
        <ConfirmLarge name={name} estimate={item.estimate} receivedAt={item.estimateReceivedAt ?? Date.now()} onConfirm={onConfirm} onCancel={onCancel} />
      )}
      {item.phase === 'importing' && note(t('datasets.upload.importing'))}
      {item.phase === 'cancelled' && note(t('datasets.upload.cancelled'))}
      {item.phase === 'uploaded' && <Indexing item={item} />}
      {item.phase === 'already' && item.existing && (
        <div className="notice stack ds-already" role="status">
          <span>
            <span>{t('datasets.upload.already')}</span> <Link href={`/collections/${encodeURIComponent(item.existing.id)}`}>{item.existing.name}</Link>
          </span>
          {onSecondCopy && (
            <div className="row">
              <button type="button" className="secondary" onClick={onSecondCopy}>
                <span>{t('datasets.upload.secondCopy')}</span>
              </button>
            </div>
          )}
        </div>
      )}
      {item.phase === 'failed' && <Failure item={item} maxBytes={maxBytes} onRetry={onRetry} />}
      {item.phase === 'skipped' && (
        <p className="notice">
          <span>{t('datasets.upload.skippedInList')}</span>
        </p>
      )}
    </li>
  );
}

/** Why the file was not imported, in plain words; a retry only where it can go differently. */
function Failure({ item, maxBytes, onRetry }: { item: FileItem; maxBytes: string; onRetry: () => void }) {
  const { t } = useLang();
  const problem = uploadProblem(item.error, item, maxBytes);
  return (
    <div className="stack ds-failure">
      <div className="row">
        <span className="badge bad">{t(problem.retry ? 'datasets.upload.failed' : 'datasets.upload.notImported')}</span>
        {problem.retry && (
          <button type="button" className="secondary" onClick={onRetry} aria-label={t('datasets.upload.retryNamed', { name: item.name })}>
            <span>{t('datasets.retry')}</span>
          </button>
        )}
      </div>
      <div role="alert" className="error action-error">
        {problem.key && <p>{t(problem.key, problem.vars)}</p>}
        {problem.detail && <p className={problem.key ? 'muted ds-small' : undefined}>{problem.detail}</p>}
      </div>
    </div>
  );
}

/** Renders again every `ms`, for words that age ("3 min ago"). */
function useTick(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/** A large file, uploaded: what indexing it would take, and whether to import it. `receivedAt`: when the page got the estimate (its ages count from then). */
function ConfirmLarge({
  name,
  estimate: e,
  receivedAt,
  onConfirm,
  onCancel,
}: {
  name: string;
  estimate: UploadEstimate;
  receivedAt: number;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { t, lang, count } = useLang();
  const now = useTick(30_000);
  const rate =
    e.chunksPerSecond === null
      ? ''
      : e.chunksPerSecond.toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-US', { maximumFractionDigits: e.chunksPerSecond < 10 ? 1 : 0 });
  return (
    <div className="notice warn stack ds-confirm" role="group" aria-label={t('datasets.upload.confirmOf', { name })}>
      <p>
        <strong>{t('datasets.upload.large', { chunks: count(e.chunks) })}</strong>
      </p>
      {e.seconds !== null ? (
        <p>
          <span>{t('datasets.upload.takes', { time: timeSpan(e.seconds, t), rate, how: rateOrigin(e, Math.max(0, (now - receivedAt) / 1000), t) })}</span>
          {e.queuedAhead > 0 && e.secondsWithQueue !== null && (
            <span>{` ${t('datasets.upload.queuedFirst', { n: count(e.queuedAhead), time: timeSpan(e.secondsWithQueue, t) })}`}</span>
          )}
        </p>
      ) : (
        <p>
          <span>{t('datasets.upload.noRate', { why: e.rateError ?? t('datasets.upload.noRateWhy') })}</span>
        </p>
      )}
      <p>
        <span>{t('datasets.upload.confirmQuestion')}</span>
      </p>
      <div className="row">
        <button type="button" onClick={onConfirm} aria-label={t('datasets.upload.confirmNamed', { name })}>
          <span>{t('datasets.upload.confirm')}</span>
        </button>
        <button type="button" className="secondary" onClick={onCancel} aria-label={t('datasets.upload.cancelNamed', { name })}>
          <span>{t('datasets.upload.cancel')}</span>
        </button>
      </div>
    </div>
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
        <progress
          aria-label={t('datasets.upload.indexingOf', { name: item.name })}
          max={(p?.job?.kind === 'ocr' ? p.job.total : p?.total) || 1}
          value={(p?.job?.kind === 'ocr' ? p.job.done : p?.done) ?? 0}
        />
        {p ? <ProgressSummary p={p} /> : <span className="muted">{t('datasets.upload.uploaded')}</span>}
      </div>
      {p?.lastError && (
        <p className={state === 'failed' ? 'error ds-error-text' : 'muted ds-error-text'}>
          <span>{p.lastError}</span>
        </p>
      )}
      {p && p.failed > 0 && <RetryButton body={{ collectionId: item.collectionId }} label={t('datasets.retry')} name={item.name} />}
    </div>
  );
}
