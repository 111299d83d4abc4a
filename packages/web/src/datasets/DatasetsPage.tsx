// /datasets: the team's knowledge bases with their size and indexing state,
// a search by name, a form to make one, and delete.
import type { ListDatasetsBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, withQuery, type PublicDataset } from '../api';
import { useLang } from '../i18n';
import { useDebounced } from '../query';
import { Boundary, Loading } from '../ui';
import { CreateDataset } from './CreateDataset';
import { DeleteButton } from '../actions';
import { ProgressSummary, trainingQuery } from './training';

export function DatasetsPage() {
  const { t } = useLang();
  const [, navigate] = useLocation();
  const [searchKey, setSearchKey] = useState('');
  const settled = useDebounced(searchKey.trim());
  return (
    <section className="stack">
      <h1>{t('datasets.title')}</h1>
      <Boundary>
        <CreateDataset onCreated={(id) => navigate(`/${encodeURIComponent(id)}`)} />
      </Boundary>
      <label className="ds-search">
        <span>{t('datasets.search')}</span>
        <input type="search" value={searchKey} onChange={(e) => setSearchKey(e.target.value)} />
      </label>
      <Boundary>
        <DatasetList searchKey={settled} />
      </Boundary>
    </section>
  );
}

function DatasetList({ searchKey }: { searchKey: string }) {
  const { t, count } = useLang();
  const client = useQueryClient();
  const { data: list } = useQuery({
    queryKey: ['datasets', { searchKey }],
    queryFn: ({ signal }) => api<PublicDataset[]>('/api/core/dataset/list', { json: { searchKey: searchKey || undefined } satisfies ListDatasetsBody, signal }),
  });
  if (!list) return <Loading />;
  if (list.length === 0)
    return (
      <p className="muted">
        <span>{searchKey ? t('datasets.noneFound') : t('datasets.empty')}</span>
      </p>
    );
  return (
    <ul className="datasets">
      {list.map((d) => (
        <li key={d._id} className="card ds-card">
          <h2 className="ds-card-title">
            <Link href={`/${encodeURIComponent(d._id)}`}>{d.name}</Link>
          </h2>
          <span className="muted">
            <span>{t('datasets.model')}</span>
            <span>: </span>
            <code>{d.vectorModel.model || t('datasets.noModel')}</code>
          </span>
          <span className="muted">
            <span>{t('datasets.size', { collections: count(d.collectionCount ?? 0), chunks: count(d.dataCount ?? 0) })}</span>
          </span>
          <Boundary>
            <DatasetProgress datasetId={d._id} />
          </Boundary>
          <div className="row">
            <DeleteButton
              name={d.name}
              onDelete={async () => {
                await api(withQuery('/api/core/dataset/delete', { id: d._id }), { method: 'DELETE' });
                // Every list that held it, and its own queries.
                await client.invalidateQueries({ queryKey: ['datasets'] });
              }}
            />
          </div>
        </li>
      ))}
    </ul>
  );
}

function DatasetProgress({ datasetId }: { datasetId: string }) {
  // Read every POLL_MS while the dataset is busy; the dataset's own page shares this query.
  const { data } = useQuery(trainingQuery(datasetId));
  return <ProgressSummary p={data} />;
}
