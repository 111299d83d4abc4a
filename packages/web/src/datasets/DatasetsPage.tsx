import { useEffect, useState } from 'react';
import { api, type PublicDataset } from '../api';
import { useLang } from '../i18n';

export function DatasetsPage() {
  const { t } = useLang();
  const [list, setList] = useState<PublicDataset[] | null>(null);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    api<PublicDataset[]>('/api/core/dataset/list', { json: {} }).then(setList, setError);
  }, []);

  // Thrown during render, so that this page's boundary shows it in place.
  if (error) throw error;
  if (!list) return <p>{t('common.loading')}</p>;
  if (list.length === 0) return <p>{t('datasets.empty')}</p>;
  return (
    <ul className="datasets">
      {list.map((d) => (
        <li key={d._id} className="card">
          <strong>{d.name}</strong>
          <span className="muted">
            <span>{t('datasets.model')}</span>: <span>{d.vectorModel.model}</span>
          </span>
        </li>
      ))}
    </ul>
  );
}
