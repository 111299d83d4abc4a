// /datasets/:datasetId/*: the dataset's header (name, fixed vector model),
// breadcrumbs, tabs, and its pages. Indexing progress is read once here and
// shared, so the collections and the import list agree and poll once.
import type { UpdateDatasetBody } from '@kbchat/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, Route, Switch, useLocation } from 'wouter';
import { api, withQuery, type PublicDataset } from '../api';
import { useLang, type MessageKey } from '../i18n';
import { ActionError } from '../actions';
import { Boundary, Loading, NotFound } from '../ui';
import { Checks } from './Checks';
import { Chunks } from './Chunks';
import { Collections } from './Collections';
import { Import } from './Import';
import { SearchTest } from './SearchTest';
import { datasetKeys, ProgressSummary, TrainingProvider, useTraining, type TrainingDetail } from './training';

export function DatasetPage({ datasetId }: { datasetId: string }) {
  const { t } = useLang();
  const training = useTraining(datasetId);
  const { data: dataset } = useQuery({
    queryKey: datasetKeys.detail(datasetId),
    queryFn: ({ signal }) => api<PublicDataset>(withQuery('/api/core/dataset/detail', { id: datasetId }), { signal }),
  });
  if (!dataset) return <Loading />;
  return (
    <TrainingProvider value={training}>
      <section className="stack">
        <nav aria-label={t('datasets.breadcrumb')} className="ds-breadcrumb">
          <Link href="~/datasets">{t('datasets.title')}</Link>
          <span aria-hidden="true">›</span>
          <span>{dataset.name}</span>
        </nav>
        <div className="ds-header">
          <h1>{dataset.name}</h1>
          <p className="row">
            <span className="muted">{t('datasets.model')}</span>
            <code>{dataset.vectorModel.model || t('datasets.noModel')}</code>
            <span className="badge" title={t('datasets.modelFixedWhy')}>
              {t('datasets.modelFixed')}
            </span>
          </p>
          <OcrSetting dataset={dataset} />
          <p className="row">
            <ProgressSummary p={withScanRead(training.detail)} />
          </p>
          {training.error && (
            <p role="alert" className="error">
              <span>{t('datasets.progress.unavailable', { message: training.error.message })}</span>
            </p>
          )}
        </div>
        <nav aria-label={t('datasets.tabs')} className="ds-tabs">
          <Tab href="/" label="datasets.tab.collections" also="/collections" />
          <Tab href="/import" label="datasets.tab.import" />
          <Tab href="/search" label="datasets.tab.search" />
          <Tab href="/checks" label="datasets.tab.checks" />
        </nav>
        <Switch>
          <Route path="/">
            <Widget>
              <Collections datasetId={datasetId} />
            </Widget>
          </Route>
          <Route path="/import">
            <Widget>
              <Import dataset={dataset} />
            </Widget>
          </Route>
          <Route path="/search">
            <Widget>
              <SearchTest dataset={dataset} />
            </Widget>
          </Route>
          <Route path="/checks">
            <Widget>
              <Checks dataset={dataset} />
            </Widget>
          </Route>
          <Route path="/collections/:collectionId">
            {(params) => (
              <Widget>
                <Chunks key={params.collectionId} collectionId={params.collectionId} />
              </Widget>
            )}
          </Route>
          <Route>
            <NotFound />
          </Route>
        </Switch>
      </section>
    </TrainingProvider>
  );
}

/** A dataset with nothing else in it while a scan's pages are read says so (not "Empty"). */
function withScanRead(detail: TrainingDetail | undefined) {
  const reading = detail?.collections.find((c) => c.job?.kind === 'ocr')?.job;
  return detail && reading && detail.total + detail.queued + detail.indexing + detail.failed === 0 ? { ...detail, job: reading } : detail;
}

/** Whether the dataset reads scans and images with OCR: saved as it is ticked. */
function OcrSetting({ dataset }: { dataset: PublicDataset }) {
  const { t } = useLang();
  const client = useQueryClient();
  // What was just ticked, shown from the click itself until the dataset is read again (the mutation's own
  // state arrives a tick later, and the box would flick back meanwhile); on a failure the stored value shows.
  const [asked, setAsked] = useState<boolean | null>(null);
  const save = useMutation({
    mutationFn: (json: UpdateDatasetBody) => api('/api/core/dataset/update', { method: 'PUT', json }),
    onSuccess: () => client.invalidateQueries({ queryKey: datasetKeys.detail(dataset._id) }),
    onSettled: () => setAsked(null),
  });
  return (
    <div className="row">
      <label className="row" title={t('datasets.ocr.why')}>
        <input
          type="checkbox"
          checked={asked ?? dataset.ocr}
          disabled={save.isPending}
          onChange={(e) => {
            setAsked(e.target.checked);
            save.mutate({ id: dataset._id, ocr: e.target.checked });
          }}
        />
        <span>{t('datasets.ocr')}</span>
      </label>
      <ActionError error={save.error} />
    </div>
  );
}

function Widget({ children }: { children: ReactNode }) {
  return <Boundary>{children}</Boundary>;
}

function Tab({ href, label, also }: { href: string; label: MessageKey; also?: string }) {
  const { t } = useLang();
  const [location] = useLocation();
  const current = location === href || (also !== undefined && location.startsWith(`${also}/`));
  return (
    <Link href={href} aria-current={current ? 'page' : undefined}>
      <span>{t(label)}</span>
    </Link>
  );
}
