// Import into a dataset: files, pasted text, a link or a website, with the
// chunking settings the API takes (shared by them, set once above them).
import type { CreateLinkCollectionBody, CreateTextCollectionBody } from '@kbchat/contracts';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, withQuery, type CollectionCreated, type PublicCollection, type PublicDataset } from '../api';
import { useModelList } from '../models';
import { useLang, type MessageKey } from '../i18n';
import { ActionError } from '../actions';
import { chunkBody, ChunkOptions, DEFAULT_CHUNKING, type ChunkSettings } from './ChunkOptions';
import { FileImport } from './FileImport';
import { SiteImport } from './SiteImport';
import { ProgressSummary, useDatasetTraining } from './training';
import { TextField } from './Field';

type Source = 'files' | 'text' | 'link' | 'site';
const SOURCES: { id: Source; label: MessageKey }[] = [
  { id: 'files', label: 'datasets.import.files' },
  { id: 'text', label: 'datasets.import.text' },
  { id: 'link', label: 'datasets.import.link' },
  { id: 'site', label: 'datasets.import.site' },
];

export function Import({ dataset }: { dataset: PublicDataset }) {
  const { t } = useLang();
  const [source, setSource] = useState<Source>('files');
  const [chunking, setChunking] = useState<ChunkSettings>(DEFAULT_CHUNKING);
  const { data: models } = useModelList();
  const defaultSize = models?.models.find((m) => m.kind === 'embedding' && m.model === dataset.vectorModel.model)?.defaultToken;
  const settings = chunkBody(chunking);
  return (
    <section className="stack" aria-labelledby="ds-import-title">
      <h2 id="ds-import-title">{t('datasets.tab.import')}</h2>
      <ChunkOptions value={chunking} onChange={setChunking} defaultSize={defaultSize} />
      <div className="ds-segments" role="radiogroup" aria-label={t('datasets.import.source')}>
        {SOURCES.map((s) => (
          <label key={s.id} className={source === s.id ? 'ds-segment on' : 'ds-segment'}>
            <input type="radio" name="ds-source" checked={source === s.id} onChange={() => setSource(s.id)} />
            <span>{t(s.label)}</span>
          </label>
        ))}
      </div>
      {/* Kept mounted while another source is shown: uploads in progress keep their rows. */}
      <div hidden={source !== 'files'}>
        <FileImport datasetId={dataset._id} settings={settings} />
      </div>
      {source === 'text' && <TextImport datasetId={dataset._id} settings={settings} />}
      {source === 'link' && <LinkImport datasetId={dataset._id} settings={settings} />}
      {source === 'site' && <SiteImport datasetId={dataset._id} settings={settings} />}
    </section>
  );
}

function useCreate() {
  const training = useDatasetTraining();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<{ id: string; name: string; chunks: number } | null>(null);
  /** `name` unknown (a link named by its page's title): the platform's name for it is asked for. */
  async function create(path: string, body: object, name: string | undefined): Promise<boolean> {
    setBusy(true);
    setError(null);
    try {
      const r = await api<CollectionCreated>(path, { json: body });
      const named =
        name ??
        (await api<PublicCollection>(withQuery('/api/core/dataset/collection/detail', { id: r.collectionId })).catch(() => undefined))?.name ??
        r.collectionId;
      setCreated({ id: r.collectionId, name: named, chunks: r.results.insertLen });
      training.changed();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, created, create };
}

function TextImport({ datasetId, settings }: { datasetId: string; settings: ReturnType<typeof chunkBody> }) {
  const { t } = useLang();
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const c = useCreate();
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (
      await c.create(
        '/api/core/dataset/collection/create/text',
        { datasetId, name: name.trim(), text, ...settings } satisfies CreateTextCollectionBody,
        name.trim(),
      )
    ) {
      setName('');
      setText('');
    }
  }
  return (
    <form className="stack" onSubmit={submit}>
      <h3>{t('datasets.import.text')}</h3>
      <label>
        <span>{t('common.name')}</span>
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={500} />
      </label>
      <TextField label={t('datasets.import.textLabel')} className="ds-tall" value={text} onChange={(e) => setText(e.target.value)} required />
      <div className="row">
        <button type="submit" disabled={c.busy || !name.trim() || !text.trim()}>
          <span>{t('datasets.import.submit')}</span>
        </button>
      </div>
      <ActionError error={c.error} />
      {c.created && <CreatedNotice created={c.created} />}
    </form>
  );
}

function LinkImport({ datasetId, settings }: { datasetId: string; settings: ReturnType<typeof chunkBody> }) {
  const { t } = useLang();
  const [link, setLink] = useState('');
  const [name, setName] = useState('');
  const c = useCreate();
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (
      await c.create(
        '/api/core/dataset/collection/create/link',
        { datasetId, link: link.trim(), name: name.trim() || undefined, ...settings } satisfies CreateLinkCollectionBody,
        name.trim() || undefined,
      )
    ) {
      setLink('');
      setName('');
    }
  }
  return (
    <form className="stack" onSubmit={submit}>
      <h3>{t('datasets.import.link')}</h3>
      <label>
        <span>{t('datasets.import.linkLabel')}</span>
        <input type="url" value={link} onChange={(e) => setLink(e.target.value)} required placeholder="https://" />
      </label>
      <label>
        <span>{t('datasets.import.linkName')}</span>
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={500} />
      </label>
      <div className="row">
        <button type="submit" disabled={c.busy || !link.trim()}>
          <span>{c.busy ? t('datasets.import.fetching') : t('datasets.import.submit')}</span>
        </button>
      </div>
      <ActionError error={c.error} />
      {c.created && <CreatedNotice created={c.created} />}
    </form>
  );
}

/** What the last import made, and its indexing as it goes. */
function CreatedNotice({ created }: { created: { id: string; name: string; chunks: number } }) {
  const { t, count } = useLang();
  const training = useDatasetTraining();
  return (
    <div className="notice stack" role="status">
      <span>{t('datasets.import.created', { name: created.name, n: count(created.chunks) })}</span>
      <span className="row">
        <ProgressSummary p={training.of(created.id)} />
        <Link href={`/collections/${encodeURIComponent(created.id)}`}>{t('datasets.import.openChunks')}</Link>
      </span>
    </div>
  );
}
