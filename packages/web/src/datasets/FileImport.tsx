// Files into a dataset: dropped (several at once) or picked, each hashed and
// asked about first (already imported: said so, with a link; partly uploaded
// before: resumed from there), uploaded two at a time with a byte progress
// bar each, then estimated (how many chunks, about how long to index at the
// model's measured speed): a large one waits for the user to say import or
// not; then followed through indexing on the shared poll, all without a
// reload. After a reload, an upload whose every byte is in comes back in the
// list as it was: the platform keeps its estimate and settings, so a large
// one asks the same again (one not estimated yet is estimated now, as it
// would have been). An upload a reload cut short is offered for resuming: a
// browser cannot read a file again by itself, so the user picks it again and
// it is matched by its content (or, without crypto.subtle, its name and
// size). A file the platform refuses is said so in plain words, with a retry
// only where one can help.
import { useEffect, useRef, useState, type DragEvent } from 'react';
import type { UnfinishedUpload } from '../api';
import { useLang } from '../i18n';
import { formatBytes } from '../ui';
import type { chunkBody } from './ChunkOptions';
import type { FileItem } from './file-item';
import { FileRow, InterruptedUploads } from './FileRow';
import { useDatasetTraining } from './training';
import { checkFile, discardUpload, estimateUpload, hashFile, importUpload, sendFile, unfinishedUploads } from './upload';

/** Uploads at once: more only splits the same bandwidth. */
const MAX_PARALLEL = 2;
const MAX_BYTES = 50 * 1024 * 1024;
const ACCEPT = '.txt,.md,.markdown,.html,.htm,.pdf,.docx,.csv,.tsv,.xlsx,.xlsm,.pptx,.png,.jpg,.jpeg,.webp';

let nextKey = 1;
const same = (i: FileItem, f: File) => i.name === f.name && i.size === f.size;

export function FileImport({ datasetId, settings }: { datasetId: string; settings: ReturnType<typeof chunkBody> }) {
  const { t } = useLang();
  const training = useDatasetTraining();
  // The list lives in a ref as well, so that each change reads the latest one synchronously (uploads end in any order).
  const list = useRef<FileItem[]>([]);
  const [items, setItems] = useState<FileItem[]>([]);
  const [interrupted, setInterrupted] = useState<UnfinishedUpload[]>([]);
  const [over, setOver] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const commit = (next: FileItem[]) => {
    list.current = next;
    setItems(next);
  };
  const update = (key: number, patch: Partial<FileItem>) => commit(list.current.map((i) => (i.key === key ? { ...i, ...patch } : i)));
  const settled = (i: FileItem) => {
    const p = i.collectionId ? training.of(i.collectionId) : undefined;
    return i.phase === 'skipped' || i.phase === 'already' || i.phase === 'cancelled' || (i.phase === 'uploaded' && !!p && p.queued + p.indexing === 0);
  };

  // Uploads left here before (a reload, a closed tab): a partial one offered for resuming, a complete one back in the list.
  useEffect(() => {
    unfinishedUploads(datasetId).then(
      (all) => {
        setInterrupted(all.filter((u) => !u.complete));
        restore(all.filter((u) => u.complete));
      },
      () => setInterrupted([]),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [datasetId]);

  // Every byte of these is in: a large one asks again what its estimate asked (with the settings it was made with); any other goes on.
  function restore(uploads: UnfinishedUpload[]) {
    const back = uploads
      .filter((u) => !list.current.some((i) => i.uploadId === u.uploadId))
      .map((u) => ({
        u,
        item: {
          key: nextKey++,
          name: u.fileName,
          size: u.size,
          phase: 'estimating',
          loaded: u.size,
          settings: u.settings ?? settings,
          sha256: u.sha256 ?? undefined,
          uploadId: u.uploadId,
        } satisfies FileItem,
      }));
    if (!back.length) return;
    commit([...back.map((b) => b.item), ...list.current]);
    for (const { u, item } of back) {
      if (u.estimate?.large) update(item.key, { phase: 'confirm', estimate: u.estimate, estimateReceivedAt: Date.now() });
      else void estimateBytes(item, u.uploadId);
    }
  }

  // Its content in the dataset already, or partly uploaded before?
  async function check(item: FileItem) {
    try {
      // Too large to be imported: not read into memory to hash, the platform's refusal says why.
      const sha256 = item.sha256 ?? (item.size > MAX_BYTES ? undefined : await hashFile(item.file!));
      const found = sha256 ? await checkFile(datasetId, sha256, item.size) : undefined;
      if (found?.imported && !item.allowDuplicate) {
        update(item.key, { phase: 'already', sha256, existing: { id: found.imported.collectionId, name: found.imported.name } });
        return;
      }
      // Every byte of it is on the platform already: nothing to send.
      if (found?.unfinished?.complete) return void estimateBytes({ ...item, sha256 }, found.unfinished.uploadId);
      const resume = found?.unfinished ?? (sha256 ? undefined : interrupted.find((u) => u.fileName === item.name && u.size === item.size));
      update(item.key, { phase: 'waiting', sha256, resumeId: resume?.uploadId, resumedFrom: resume?.offset || undefined });
    } catch (err) {
      update(item.key, { phase: 'failed', error: err });
    }
  }

  function add(files: File[]) {
    const next = [...list.current];
    const added: FileItem[] = [];
    for (const file of files) {
      const item: FileItem = { key: nextKey++, name: file.name, size: file.size, file, phase: 'hashing', loaded: 0, settings };
      const earlier = next.find((i) => same(i, file) && !['skipped', 'failed', 'already', 'cancelled'].includes(i.phase));
      if (earlier && earlier.phase !== 'uploaded') Object.assign(item, { phase: 'skipped' });
      else added.push(item);
      next.push(item);
    }
    commit(next);
    added.forEach((i) => void check(i));
  }

  // Every byte is in: how large is it? A large one waits for the user's word; anything else goes in at once.
  async function estimateBytes(item: FileItem, uploadId: string) {
    update(item.key, { phase: 'estimating', uploadId, loaded: item.size, error: undefined });
    setInterrupted((l) => l.filter((u) => u.uploadId !== uploadId));
    try {
      const estimate = await estimateUpload(uploadId, item.settings);
      if (estimate.large && !item.confirmed) update(item.key, { phase: 'confirm', estimate, estimateReceivedAt: Date.now() });
      else await importBytes({ ...item, estimate }, uploadId);
    } catch (err) {
      update(item.key, { phase: 'failed', error: err });
    }
  }

  async function cancel(item: FileItem) {
    try {
      if (item.uploadId) await discardUpload(item.uploadId);
      update(item.key, { phase: 'cancelled' });
    } catch (err) {
      update(item.key, { phase: 'failed', error: err });
    }
  }

  async function importBytes(item: FileItem, uploadId: string) {
    update(item.key, { phase: 'importing', uploadId, loaded: item.size, estimate: item.estimate, confirmed: item.confirmed, error: undefined });
    setInterrupted((l) => l.filter((u) => u.uploadId !== uploadId));
    try {
      const r = await importUpload(uploadId, item.settings, !!item.allowDuplicate);
      if (r.alreadyImported && !item.allowDuplicate) update(item.key, { phase: 'already', existing: { id: r.collectionId, name: item.name } });
      else update(item.key, { phase: 'uploaded', collectionId: r.collectionId });
      training.changed();
    } catch (err) {
      update(item.key, { phase: 'failed', error: err });
    }
  }

  function start(item: FileItem) {
    update(item.key, { phase: 'uploading', loaded: item.resumedFrom ?? 0, error: undefined });
    const up = sendFile(
      item.file!,
      { datasetId, sha256: item.sha256, resumeId: item.resumeId },
      {
        onProgress: (loaded) => update(item.key, { loaded }),
        onResumed: (offset) => update(item.key, { resumedFrom: offset }),
      },
    );
    up.done.then(
      (uploadId) => void estimateBytes(item, uploadId),
      (err) => update(item.key, { phase: 'failed', error: err }),
    );
  }

  // At most MAX_PARALLEL uploading; the next waiting ones start as others end.
  useEffect(() => {
    const running = items.filter((i) => i.phase === 'uploading').length;
    items
      .filter((i) => i.phase === 'waiting')
      .slice(0, Math.max(0, MAX_PARALLEL - running))
      .forEach(start);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [items]);

  function retry(item: FileItem) {
    if (item.uploadId) return void (item.confirmed ? importBytes(item, item.uploadId) : estimateBytes(item, item.uploadId));
    update(item.key, { phase: 'hashing', error: undefined });
    // Checked again: the platform may have the content now (the answer was lost), or part of its bytes.
    void check(item);
  }

  function onDrop(e: DragEvent) {
    e.preventDefault();
    setOver(false);
    add([...e.dataTransfer.files]);
  }

  // Unfinished uploads this list is not already continuing.
  const offered = interrupted.filter((u) => !items.some((i) => i.resumeId === u.uploadId && i.phase !== 'failed'));

  return (
    <section className="stack" aria-labelledby="ds-files-title">
      <h3 id="ds-files-title">{t('datasets.import.files')}</h3>
      <div
        className={over ? 'ds-drop over' : 'ds-drop'}
        data-testid="drop-zone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <p>
          <span>{t('datasets.upload.drop')}</span>
        </p>
        <button type="button" onClick={() => picker.current?.click()}>
          <span>{t('datasets.upload.choose')}</span>
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          accept={ACCEPT}
          aria-label={t('datasets.upload.choose')}
          onChange={(e) => {
            add([...(e.target.files ?? [])]);
            e.target.value = '';
          }}
        />
        <p className="muted ds-small">
          <span>{t('datasets.upload.accepted', { max: formatBytes(MAX_BYTES) })}</span>
        </p>
      </div>
      {offered.length > 0 && (
        <InterruptedUploads
          uploads={offered}
          onDiscard={async (u) => {
            await discardUpload(u.uploadId);
            setInterrupted((l) => l.filter((x) => x.uploadId !== u.uploadId));
          }}
        />
      )}
      {items.length > 0 && (
        <ul className="ds-files" aria-label={t('datasets.upload.list')}>
          {items.map((item) => (
            <FileRow
              key={item.key}
              item={item}
              maxBytes={formatBytes(MAX_BYTES)}
              onRetry={() => retry(item)}
              onConfirm={() => void importBytes({ ...item, confirmed: true }, item.uploadId!)}
              onCancel={() => void cancel(item)}
              // A second copy is sent again: only from a file this page has.
              onSecondCopy={
                item.file
                  ? () =>
                      update(item.key, {
                        phase: 'waiting',
                        allowDuplicate: true,
                        resumeId: undefined,
                        resumedFrom: undefined,
                        uploadId: undefined,
                        estimate: undefined,
                        confirmed: undefined,
                      })
                  : undefined
              }
            />
          ))}
        </ul>
      )}
      {items.some(settled) && (
        <div className="row">
          <button type="button" className="secondary" onClick={() => commit(list.current.filter((i) => !settled(i)))}>
            <span>{t('datasets.upload.clear')}</span>
          </button>
        </div>
      )}
    </section>
  );
}
