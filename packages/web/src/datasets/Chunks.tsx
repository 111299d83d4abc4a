// /datasets/:datasetId/collections/:collectionId: a collection's chunks,
// searched and paged by the server, each opened to view and edit in place.
import type { ListDataBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, withQuery, type Page, type PublicCollection, type PublicData } from '../api';
import { useLang } from '../i18n';
import { keepPreviousData, useDebounced } from '../query';
import { Boundary, Loading, Pager } from '../ui';
import { ChunkEditor } from './ChunkEditor';
import { LinkSync } from './LinkSync';
import { DeleteButton } from '../actions';
import { ProgressSummary, useDatasetTraining } from './training';

const PAGE_SIZE = 20;
/** An OCR page read with less confidence than this (0–100) is worth checking by eye. */
const LOW_CONFIDENCE = 60;

export function Chunks({ collectionId }: { collectionId: string }) {
  const { t, count } = useLang();
  const training = useDatasetTraining();
  const client = useQueryClient();
  const { data: collection } = useQuery({
    queryKey: ['collections', collectionId],
    queryFn: ({ signal }) => api<PublicCollection>(withQuery('/api/core/dataset/collection/detail', { id: collectionId }), { signal }),
  });
  const [searchText, setSearchText] = useState('');
  const [offset, setOffset] = useState(0);
  const search = useDebounced(searchText.trim());
  const chunksKey = ['collections', collectionId, 'chunks'];
  const { data } = useQuery({
    queryKey: [...chunksKey, { offset, search }],
    queryFn: ({ signal }) =>
      api<Page<PublicData>>('/api/core/dataset/data/v2/list', {
        json: { collectionId, offset, pageSize: PAGE_SIZE, searchText: search || undefined } satisfies ListDataBody,
        signal,
      }),
    placeholderData: keepPreviousData,
  });
  const reload = () => client.invalidateQueries({ queryKey: chunksKey });
  const [open, setOpen] = useState<string | null>(null);
  if (!collection) return <Loading />;

  return (
    <section className="stack" aria-labelledby="ds-chunks-title">
      <nav aria-label={t('datasets.breadcrumb')} className="ds-breadcrumb">
        <Link href="/">{t('datasets.tab.collections')}</Link>
        <span aria-hidden="true">›</span>
        <span>{collection.name}</span>
      </nav>
      <h2 id="ds-chunks-title">{t('datasets.chunks.title', { name: collection.name })}</h2>
      <p className="row">
        <ProgressSummary p={training.of(collectionId)} />
        {collection.rawLink && (
          <a href={collection.rawLink} target="_blank" rel="noreferrer noopener">
            {collection.rawLink}
          </a>
        )}
      </p>
      {collection.type === 'link' && collection.trainingType === 'chunk' && <LinkSync collection={collection} />}
      {collection.readError && (
        <p className="error">
          <span>{collection.readError}</span>
        </p>
      )}
      {collection.ocr && (
        <p className="muted">
          <span>{t('datasets.chunks.ocr', { pages: count(collection.ocr.pages.length), confidence: collection.ocr.confidence ?? '–' })}</span>
          {collection.ocr.pages.some((p) => p.confidence === null || p.confidence < LOW_CONFIDENCE) && (
            <span>
              {' '}
              {t('datasets.chunks.ocrLow', {
                pages: collection.ocr.pages
                  .filter((p) => p.confidence === null || p.confidence < LOW_CONFIDENCE)
                  .map((p) => p.page)
                  .join(', '),
              })}
            </span>
          )}
        </p>
      )}
      <label className="ds-search">
        <span>{t('datasets.chunks.search')}</span>
        <input
          type="search"
          value={searchText}
          onChange={(e) => {
            setSearchText(e.target.value);
            setOffset(0);
          }}
        />
      </label>
      {!data ? (
        <Loading />
      ) : data.list.length === 0 ? (
        <p className="muted">
          <span>{search ? t('datasets.chunks.noneFound') : t('datasets.chunks.empty')}</span>
        </p>
      ) : (
        <>
          <p className="muted">
            <span>{t('datasets.chunks.total', { n: count(data.total) })}</span>
          </p>
          <ol className="ds-chunks">
            {data.list.map((d) => (
              <li key={d._id} className="card stack ds-chunk" aria-label={t('datasets.chunks.number', { n: d.chunkIndex + 1 })}>
                <div className="ds-chunk-head">
                  <span className="badge">{t('datasets.chunks.number', { n: d.chunkIndex + 1 })}</span>
                  <span className="row">
                    <button type="button" className="secondary" aria-expanded={open === d._id} onClick={() => setOpen(open === d._id ? null : d._id)}>
                      <span>{open === d._id ? t('common.close') : t('datasets.chunks.open')}</span>
                    </button>
                    <DeleteButton
                      name={t('datasets.chunks.number', { n: d.chunkIndex + 1 })}
                      onDelete={async () => {
                        await api(withQuery('/api/core/dataset/data/delete', { id: d._id }), { method: 'DELETE' });
                        await reload();
                        training.changed();
                      }}
                    />
                  </span>
                </div>
                {open === d._id ? (
                  <Boundary>
                    <ChunkEditor
                      dataId={d._id}
                      onSaved={() => {
                        void reload();
                        training.changed();
                      }}
                    />
                  </Boundary>
                ) : (
                  <>
                    <p className="ds-text ds-clamp">
                      <span>{d.q}</span>
                    </p>
                    {d.a && (
                      <p className="ds-text ds-clamp muted">
                        <span>{d.a}</span>
                      </p>
                    )}
                  </>
                )}
              </li>
            ))}
          </ol>
          <Pager offset={offset} pageSize={PAGE_SIZE} total={data.total} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}
