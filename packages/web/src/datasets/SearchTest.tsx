// /datasets/:datasetId/search: a question against this dataset with every
// setting searchTest takes, to see what a chat would be given and why.
import type { SearchTestBody } from '@kbchat/contracts';
import { useState, type FormEvent } from 'react';
import { api, type CheckSettings, type ModelStatus, type PublicDataset } from '../api';
import { useModelList } from '../models';
import { useLang } from '../i18n';
import { Boundary } from '../ui';
import { ActionError } from '../actions';
import { SearchResults, type SearchAnswer } from './SearchResults';
import { SearchBasicsFields, TextField, type SearchBasics } from './Field';
import { SaveCheck } from './SaveCheck';

export function SearchTest({ dataset }: { dataset: PublicDataset }) {
  const { t } = useLang();
  const { data: models } = useModelList();
  const rerankModels = models?.models.filter((m) => m.kind === 'rerank') ?? [];
  const llmModels = models?.models.filter((m) => m.kind === 'llm') ?? [];
  const [text, setText] = useState('');
  const [basics, setBasics] = useState<SearchBasics>({ mode: 'mixedRecall', similarity: '0', limit: '5000' });
  const [rerank, setRerank] = useState(false);
  const [rerankModel, setRerankModel] = useState('');
  const [extension, setExtension] = useState(false);
  const [extensionModel, setExtensionModel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  // What the shown answer was asked with, for "Save as check".
  const [asked, setAsked] = useState<{ text: string; settings: Partial<CheckSettings>; at: number } | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const settings = {
        searchMode: basics.mode,
        similarity: Number(basics.similarity) || 0,
        limit: Number.parseInt(basics.limit, 10) || undefined,
        usingReRank: rerank && rerankModels.length > 0,
        rerankModel: rerank ? rerankModel || rerankModels[0]?.model : undefined,
        datasetSearchUsingExtensionQuery: extension && llmModels.length > 0,
        datasetSearchExtensionModel: extension ? extensionModel || llmModels[0]?.model : undefined,
      };
      setAnswer(await api<SearchAnswer>('/api/core/dataset/searchTest', { json: { datasetId: dataset._id, text, ...settings } satisfies SearchTestBody }));
      setAsked({ text, settings, at: Date.now() });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="stack" aria-labelledby="ds-search-title">
      <h2 id="ds-search-title">{t('datasets.tab.search')}</h2>
      <form className="card stack" onSubmit={submit}>
        <TextField label={t('datasets.searchTest.query')} value={text} onChange={(e) => setText(e.target.value)} required maxLength={10000} />
        <div className="ds-grid3">
          <SearchBasicsFields value={basics} onChange={setBasics} />
        </div>
        <ModelToggle
          label={t('datasets.searchTest.rerank')}
          none={t('datasets.searchTest.noRerank')}
          models={rerankModels}
          on={rerank}
          onOn={setRerank}
          model={rerankModel}
          onModel={setRerankModel}
          loaded={!!models}
        />
        <ModelToggle
          label={t('datasets.searchTest.extension')}
          none={t('datasets.searchTest.noLlm')}
          models={llmModels}
          on={extension}
          onOn={setExtension}
          model={extensionModel}
          onModel={setExtensionModel}
          loaded={!!models}
        />
        <div className="row">
          <button type="submit" disabled={busy || !text.trim()}>
            <span>{busy ? t('datasets.searchTest.searching') : t('datasets.searchTest.submit')}</span>
          </button>
        </div>
        <ActionError error={error} />
      </form>
      {answer && (
        <Boundary>
          <SearchResults answer={answer} />
          {asked && <SaveCheck key={asked.at} datasetId={dataset._id} question={asked.text} settings={asked.settings} results={answer.list} />}
        </Boundary>
      )}
    </section>
  );
}

/** A step that needs a model: a switch and the model, or a line saying none is configured. */
function ModelToggle(p: {
  label: string;
  none: string;
  models: ModelStatus[];
  on: boolean;
  onOn: (v: boolean) => void;
  model: string;
  onModel: (m: string) => void;
  loaded: boolean;
}) {
  const { t } = useLang();
  if (!p.loaded) return null;
  if (p.models.length === 0)
    return (
      <p className="muted">
        <span>{p.none}</span>
      </p>
    );
  return (
    <div className="ds-toggle row">
      <label className="ds-inline">
        <input type="checkbox" checked={p.on} onChange={(e) => p.onOn(e.target.checked)} />
        <span>{p.label}</span>
      </label>
      {p.on && (
        <label className="ds-inline">
          <span>{t('datasets.searchTest.model')}</span>
          <select
            value={p.model || p.models[0]!.model}
            onChange={(e) => p.onModel(e.target.value)}
            aria-label={t('datasets.searchTest.modelFor', { step: p.label })}
          >
            {p.models.map((m) => (
              <option key={m.model} value={m.model}>
                {m.served ? m.model : t('datasets.create.modelNotServed', { model: m.model })}
              </option>
            ))}
          </select>
        </label>
      )}
    </div>
  );
}
