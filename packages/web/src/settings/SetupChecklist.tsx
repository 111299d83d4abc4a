// What stands in the way, shown above every page while it does: no chat or
// embedding model served, the gateway down, indexing that failed or waits on a
// rate limit; and, on a new install, the first steps. Nothing when all is well.
// Read every 15 s, and while the first step is shown also at each change of
// address: making a knowledge base opens it, and the step goes at once.
import type { ListDatasetsBody } from '@kbchat/contracts';
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, useLocation } from 'wouter';
import { api, withQuery, type DatasetProgress, type ModelList, type PublicDataset } from '../api';
import { useLang } from '../i18n';
import { formatClock } from '../ui';

/** Knowledge bases looked at for indexing trouble (the first ones listed). */
const DATASETS_CHECKED = 20;

interface Problems {
  models: ModelList;
  datasets: PublicDataset[];
  indexing: { dataset: PublicDataset; progress: DatasetProgress }[];
}

async function findProblems(signal: AbortSignal): Promise<Problems> {
  const [models, datasets] = await Promise.all([
    api<ModelList>('/api/core/ai/model/list', { signal }),
    api<PublicDataset[]>('/api/core/dataset/list', { json: {} satisfies ListDatasetsBody, signal }),
  ]);
  const indexing = await Promise.all(
    datasets.slice(0, DATASETS_CHECKED).map(async (dataset) => ({
      dataset,
      progress: await api<DatasetProgress>(withQuery('/api/core/dataset/trainingDetail', { datasetId: dataset.id }), { signal }),
    })),
  );
  return { models, datasets, indexing };
}

export function SetupChecklist() {
  const { t, lang } = useLang();
  const { data, refetch } = useQuery({ queryKey: ['setup-checklist'], queryFn: ({ signal }) => findProblems(signal), refetchInterval: 15_000 });
  const [location] = useLocation();
  const firstSteps = data !== undefined && data.datasets.length === 0;
  useEffect(() => {
    if (firstSteps) void refetch();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [location]);
  if (!data) return null;
  const served = (kind: string) => data.models.models.some((m) => m.kind === kind && m.served);
  const items: { key: string; text: string }[] = [];
  // The platform's message names the gateway and the cause: shown as it is.
  if (!data.models.gateway.reachable) items.push({ key: 'gateway', text: data.models.gateway.message || t('models.gatewayDown') });
  else {
    if (!served('llm')) items.push({ key: 'llm', text: t('setup.noLlm') });
    if (!served('embedding')) items.push({ key: 'embedding', text: t('setup.noVector') });
    for (const m of data.models.models) {
      if (!m.served) items.push({ key: `model:${m.model}`, text: t('setup.modelNotServed', { model: m.model, message: m.message ?? '' }) });
      else if (m.failing)
        items.push({
          key: `model:${m.model}`,
          text: t('setup.modelFailing', { model: m.model, count: m.failing.failures, time: formatClock(m.failing.since, lang), message: m.failing.lastError }),
        });
    }
  }
  for (const { dataset, progress } of data.indexing) {
    if (progress.failed > 0) items.push({ key: `failed:${dataset.id}`, text: t('setup.failed', { count: progress.failed, name: dataset.name }) });
    if (progress.rateLimited > 0 && progress.rateLimitedUntil)
      items.push({
        key: `limited:${dataset.id}`,
        text: t('setup.rateLimited', { name: dataset.name, n: progress.rateLimited, time: formatClock(progress.rateLimitedUntil, lang) }),
      });
    else if (progress.failed === 0 && progress.queued > 0 && progress.indexing === 0 && progress.lastError)
      items.push({ key: `paused:${dataset.id}`, text: t('setup.paused', { name: dataset.name, message: progress.lastError }) });
  }
  if (items.length === 0 && data.datasets.length > 0) return null;
  return (
    <aside className="notice warn setup" aria-label={t('setup.title')}>
      <strong>{t('setup.title')}</strong>
      <ul>
        {items.map((i) => (
          <li key={i.key}>
            <span>{i.text}</span>
          </li>
        ))}
        {data.datasets.length === 0 && (
          <li>
            <span>{t('setup.firstDataset')}</span>
          </li>
        )}
      </ul>
      {items.some((i) => i.key === 'llm' || i.key === 'embedding' || i.key.startsWith('model:')) && (
        <Link href="~/models">
          <span>{t('setup.seeModels')}</span>
        </Link>
      )}
    </aside>
  );
}
