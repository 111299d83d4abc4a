// Files into a dataset: dropped (several at once) or picked, uploaded two at
// a time with a byte progress bar each, then followed through indexing on
// the shared poll, all without a reload. A file already in the dataset
// (same name and size) is asked about before it goes in again.
import { useEffect, useRef, useState, type DragEvent } from 'react';
import { api, type PublicCollection } from '../api';
import { useLang } from '../i18n';
import { formatBytes } from '../ui';
import type { chunkBody } from './ChunkOptions';
import { FileRow } from './FileRow';
import { useDatasetTraining } from './training';
import { uploadFile } from './upload';

/** Uploads at once: more only splits the same bandwidth, and each holds a file in the platform's memory. */
const MAX_PARALLEL = 2;
const MAX_BYTES = 50 * 1024 * 1024;
const ACCEPT = '.txt,.md,.markdown,.html,.htm,.pdf,.docx,.csv';

export type Phase = 'checking' | 'ask' | 'waiting' | 'uploading' | 'uploaded' | 'failed' | 'skipped';

export interface FileItem {
  key: number;
  file: File;
  phase: Phase;
  loaded: number;
  settings: ReturnType<typeof chunkBody>;
  error?: unknown;
  collectionId?: string;
  insertLen?: number;
  /** Why it was skipped or asked about. */
  reason?: 'inDataset' | 'inList';
}

let nextKey = 1;
const same = (a: File, b: File) => a.name === b.name && a.size === b.size;

export function FileImport({ datasetId, settings }: { datasetId: string; settings: ReturnType<typeof chunkBody> }) {
  const { t } = useLang();
  const training = useDatasetTraining();
  // The list lives in a ref as well, so that each change reads the latest one synchronously (uploads end in any order).
  const list = useRef<FileItem[]>([]);
  const [items, setItems] = useState<FileItem[]>([]);
  const [over, setOver] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const commit = (next: FileItem[]) => {
    list.current = next;
    setItems(next);
  };
  const update = (key: number, patch: Partial<FileItem>) => commit(list.current.map((i) => (i.key === key ? { ...i, ...patch } : i)));
  const settled = (i: FileItem) => {
    const p = i.collectionId ? training.of(i.collectionId) : undefined;
    return i.phase === 'skipped' || (i.phase === 'uploaded' && !!p && p.queued + p.indexing === 0);
  };

  // Is a file of this name and size in the dataset already? (The upload records its size in the collection's metadata.)
  async function check(item: FileItem) {
    try {
      const r = await api<{ list: PublicCollection[] }>('/api/core/dataset/collection/listV2', { json: { datasetId, searchText: item.file.name.slice(0, 200), pageSize: 100 } });
      const found = r.list.some((c) => c.fileName === item.file.name && (c.metadata as { fileSize?: number } | null)?.fileSize === item.file.size);
      update(item.key, found ? { phase: 'ask', reason: 'inDataset' } : { phase: 'waiting' });
    } catch (err) {
      update(item.key, { phase: 'failed', error: err });
    }
  }

  function add(files: File[]) {
    const next = [...list.current];
    const added: FileItem[] = [];
    for (const file of files) {
      const item: FileItem = { key: nextKey++, file, phase: 'checking', loaded: 0, settings };
      const earlier = next.find((i) => same(i.file, file) && i.phase !== 'skipped' && i.phase !== 'failed');
      if (file.size > MAX_BYTES) Object.assign(item, { phase: 'failed', error: new Error(t('datasets.upload.tooLarge', { max: formatBytes(MAX_BYTES) })) });
      else if (earlier?.phase === 'uploaded') Object.assign(item, { phase: 'ask', reason: 'inDataset' });
      else if (earlier) Object.assign(item, { phase: 'skipped', reason: 'inList' });
      else added.push(item);
      next.push(item);
    }
    commit(next);
    added.forEach((i) => void check(i));
  }

  function start(item: FileItem) {
    update(item.key, { phase: 'uploading', loaded: 0, error: undefined });
    const up = uploadFile(item.file, { datasetId, ...item.settings, metadata: { fileSize: item.file.size } }, (loaded) => update(item.key, { loaded }));
    up.done.then(
      (r) => {
        update(item.key, { phase: 'uploaded', loaded: item.file.size, collectionId: r.collectionId, insertLen: r.insertLen });
        training.changed();
      },
      (err) => update(item.key, { phase: 'failed', error: err }),
    );
  }

  // At most MAX_PARALLEL uploading; the next waiting ones start as others end.
  useEffect(() => {
    const running = items.filter((i) => i.phase === 'uploading').length;
    items.filter((i) => i.phase === 'waiting').slice(0, Math.max(0, MAX_PARALLEL - running)).forEach(start);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [items]);

  function onDrop(e: DragEvent) {
    e.preventDefault();
    setOver(false);
    add([...e.dataTransfer.files]);
  }

  const finished = items.some(settled);

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
      {items.length > 0 && (
        <ul className="ds-files" aria-label={t('datasets.upload.list')}>
          {items.map((item) => (
            <FileRow
              key={item.key}
              item={item}
              onRetry={() => {
                update(item.key, { phase: 'checking', error: undefined });
                void check(item);
              }}
              onAnswer={(again) => update(item.key, again ? { phase: 'waiting' } : { phase: 'skipped' })}
            />
          ))}
        </ul>
      )}
      {finished && (
        <div className="row">
          <button type="button" className="secondary" onClick={() => commit(list.current.filter((i) => !settled(i)))}>
            <span>{t('datasets.upload.clear')}</span>
          </button>
        </div>
      )}
    </section>
  );
}
