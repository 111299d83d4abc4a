// The knowledge bases searched for every question, and how: mode, minimum
// similarity, the quotes' token budget, the weight of vectors in mixed
// recall, reranking (only with a configured rerank model) and question
// completion before the search.
import { useLang } from '../i18n';
import { DatasetPicker } from './DatasetPicker';
import type { Search } from './draft';
import { CheckField, NumberField, SelectField, TextField } from './fields';
import { optionsOf, SEARCH_MODE_KEYS } from './labels';
import { ModelSelect } from './ModelSelect';
import type { SectionProps } from './section-props';

export function KnowledgeSection({ draft, change, models, datasets, invalid }: SectionProps) {
  const { t } = useLang();
  const s = draft.search;
  const setSearch = (patch: Partial<Search>) => change({ search: { ...s, ...patch } });
  const setExtension = (patch: Partial<Search['queryExtension']>) => setSearch({ queryExtension: { ...s.queryExtension, ...patch } });
  const rerankers = models.filter((m) => m.kind === 'rerank');
  return (
    <section className={`card stack ap-section${invalid ? ' ap-invalid' : ''}`} aria-labelledby="ap-knowledge">
      <h2 id="ap-knowledge">{t('apps.section.knowledge')}</h2>
      <DatasetPicker legend={t('apps.datasets')} datasets={datasets} value={draft.datasets} onChange={(ids) => change({ datasets: ids })} />
      {draft.datasets.length === 0 && (
        <p className="muted">
          <span>{t('apps.datasets.plainChat')}</span>
        </p>
      )}
      <div className="ap-grid2">
        <SelectField
          label={t('apps.search.mode')}
          value={s.searchMode}
          onChange={(searchMode) => setSearch({ searchMode: searchMode as Search['searchMode'] })}
          options={optionsOf(SEARCH_MODE_KEYS, t)}
        />
        <NumberField
          label={t('apps.search.limit')}
          value={s.limit}
          onChange={(limit) => setSearch({ limit: limit ?? Number.NaN })}
          min={1}
          max={100_000}
          step={1}
          hint={<span>{t('apps.search.limitHint')}</span>}
        />
        <NumberField
          label={t('apps.search.similarity')}
          value={s.similarity}
          onChange={(similarity) => setSearch({ similarity: similarity ?? Number.NaN })}
          min={0}
          max={1}
          step={0.01}
          hint={<span>{t('apps.search.similarityHint')}</span>}
        />
        {s.searchMode === 'mixedRecall' && (
          <NumberField
            label={t('apps.search.embeddingWeight')}
            value={s.embeddingWeight}
            onChange={(embeddingWeight) => setSearch({ embeddingWeight })}
            min={0}
            max={1}
            step={0.05}
            placeholder={t('apps.search.embeddingWeightDefault')}
            hint={<span>{t('apps.search.embeddingWeightHint')}</span>}
          />
        )}
      </div>
      <CheckField
        label={t('apps.search.asTool')}
        checked={s.asTool}
        onChange={(asTool) => setSearch({ asTool })}
        hint={<span>{t('apps.search.asToolHint')}</span>}
      />
      <fieldset className="stack">
        <legend>
          <span>{t('apps.rerank')}</span>
        </legend>
        {rerankers.length === 0 && (
          <p className="notice ap-note">
            <span>{t('apps.rerank.none')}</span>
          </p>
        )}
        {(rerankers.length > 0 || s.usingReRank) && (
          <CheckField label={t('apps.rerank.use')} checked={s.usingReRank} onChange={(usingReRank) => setSearch({ usingReRank })} />
        )}
        {s.usingReRank && rerankers.length > 0 && (
          <ModelSelect
            label={t('apps.rerank.model')}
            kind="rerank"
            models={models}
            value={s.rerankModel}
            onChange={(rerankModel) => setSearch({ rerankModel })}
            unset={t('apps.rerank.first')}
          />
        )}
      </fieldset>
      <fieldset className="stack">
        <legend>
          <span>{t('apps.extension')}</span>
        </legend>
        <CheckField
          label={t('apps.extension.use')}
          checked={s.queryExtension.enabled}
          onChange={(enabled) => setExtension({ enabled })}
          hint={<span>{t('apps.extension.hint')}</span>}
        />
        {s.queryExtension.enabled && (
          <>
            <ModelSelect
              label={t('apps.extension.model')}
              kind="llm"
              models={models}
              value={s.queryExtension.model}
              onChange={(model) => setExtension({ model })}
              unset={t('apps.appModel')}
            />
            <TextField
              label={t('apps.extension.background')}
              value={s.queryExtension.background}
              onChange={(background) => setExtension({ background })}
              multiline
              rows={3}
              maxLength={20_000}
              hint={<span>{t('apps.extension.backgroundHint')}</span>}
            />
          </>
        )}
      </fieldset>
    </section>
  );
}
