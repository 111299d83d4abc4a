// A website from a start address: its own pages, to a depth and a number of
// pages, a collection each (the platform honours robots.txt and reads the
// sitemap); what was made, and what was skipped and why.
import { MAX_SITE_PAGES, type CreateWebsiteCollectionsBody, type WebsiteImported } from '@kbchat/contracts';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api } from '../api';
import { ActionError } from '../actions';
import { useLang } from '../i18n';
import type { chunkBody } from './ChunkOptions';
import { useDatasetTraining } from './training';

export function SiteImport({ datasetId, settings }: { datasetId: string; settings: ReturnType<typeof chunkBody> }) {
  const { t, count } = useLang();
  const training = useDatasetTraining();
  const [url, setUrl] = useState('');
  const [maxPages, setMaxPages] = useState(20);
  const [maxDepth, setMaxDepth] = useState(2);
  const read = useMutation({
    mutationFn: (json: CreateWebsiteCollectionsBody) => api<WebsiteImported>('/api/core/dataset/collection/create/website', { json }),
    onSuccess: () => training.changed(),
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    read.mutate({ datasetId, url: url.trim(), maxPages, maxDepth, ...settings });
  }
  const done = read.data;
  return (
    <form className="stack" onSubmit={submit}>
      <h3>{t('datasets.import.site')}</h3>
      <p className="muted">
        <span>{t('datasets.site.about')}</span>
      </p>
      <label>
        <span>{t('datasets.site.start')}</span>
        <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required placeholder="https://" />
      </label>
      <div className="row">
        <label>
          <span>{t('datasets.site.maxPages')}</span>
          <input type="number" min={1} max={MAX_SITE_PAGES} value={maxPages} onChange={(e) => setMaxPages(Number(e.target.value))} required />
        </label>
        <label>
          <span>{t('datasets.site.maxDepth')}</span>
          <input type="number" min={0} max={5} value={maxDepth} onChange={(e) => setMaxDepth(Number(e.target.value))} required />
        </label>
      </div>
      <div className="row">
        <button type="submit" disabled={read.isPending || !url.trim()}>
          <span>{read.isPending ? t('datasets.site.reading') : t('datasets.import.submit')}</span>
        </button>
      </div>
      <ActionError error={read.error} />
      {done && (
        <div className="notice stack" role="status">
          <span>{t('datasets.site.done', { n: count(done.collections.length), skipped: count(done.skipped.length) })}</span>
          {done.collections.length > 0 && (
            <ul aria-label={t('datasets.site.imported')}>
              {done.collections.map((c) => (
                <li key={c.collectionId}>
                  <Link href={`/collections/${encodeURIComponent(c.collectionId)}`}>{c.name}</Link>
                  <span className="muted"> · {c.url}</span>
                </li>
              ))}
            </ul>
          )}
          {done.skipped.length > 0 && (
            <ul aria-label={t('datasets.site.skippedList')}>
              {done.skipped.map((s) => (
                <li key={s.url}>
                  <span>{s.url}</span>
                  <span className="muted">: {s.reason}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </form>
  );
}
