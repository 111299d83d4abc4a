// Classification before the answer: off, or a model, a background and at
// least two categories. A category can search its own knowledge bases, add
// its own prompt, or answer with a fixed reply (no search, no model call).
import { useRef } from 'react';
import { useLang } from '../i18n';
import { DatasetPicker } from './DatasetPicker';
import { newCategory, type Classify } from './draft';
import { CheckField, TextField } from './fields';
import { ModelSelect } from './ModelSelect';
import type { SectionProps } from './section-props';

type Category = Classify['categories'][number];

export function ClassifySection({ draft, change, models, datasets, invalid }: SectionProps) {
  const { t } = useLang();
  const c = draft.classify;
  // Switching off and on again within one visit gives the categories back.
  const last = useRef<Classify | null>(c);
  if (c) last.current = c;
  const set = (patch: Partial<Classify>) => change({ classify: { ...c!, ...patch } });
  const setCategory = (i: number, patch: Partial<Category>) => set({ categories: c!.categories.map((x, j) => (j === i ? { ...x, ...patch } : x)) });
  return (
    <section className={`card stack ap-section${invalid ? ' ap-invalid' : ''}`} aria-labelledby="ap-classify">
      <h2 id="ap-classify">{t('apps.section.classify')}</h2>
      <CheckField
        label={t('apps.classify.use')}
        checked={c !== null}
        onChange={(on) => change({ classify: on ? (last.current ?? { background: '', categories: [newCategory([]), newCategory([newCategory([])])] }) : null })}
        hint={<span>{t('apps.classify.hint')}</span>}
      />
      {c && (
        <>
          <ModelSelect
            label={t('apps.classify.model')}
            kind="llm"
            models={models}
            value={c.model}
            onChange={(model) => set({ model })}
            unset={t('apps.appModel')}
          />
          <TextField
            label={t('apps.classify.background')}
            value={c.background}
            onChange={(background) => set({ background })}
            multiline
            rows={2}
            maxLength={20_000}
          />
          <ol className="ap-items">
            {c.categories.map((cat, i) => (
              <li key={i}>
                <fieldset className="stack">
                  <legend>
                    <span>{t('apps.classify.category', { n: i + 1 })}</span>
                  </legend>
                  <div className="ap-grid2">
                    <TextField
                      label={t('apps.classify.id')}
                      value={cat.id}
                      onChange={(id) => setCategory(i, { id })}
                      maxLength={64}
                      hint={<span>{t('apps.classify.idHint')}</span>}
                    />
                    <TextField
                      label={t('apps.classify.description')}
                      value={cat.description}
                      onChange={(description) => setCategory(i, { description })}
                      maxLength={2000}
                    />
                  </div>
                  <TextField
                    label={t('apps.classify.reply')}
                    value={cat.reply ?? ''}
                    onChange={(reply) => setCategory(i, { reply: reply || undefined })}
                    multiline
                    rows={2}
                    hint={<span>{t('apps.classify.replyHint')}</span>}
                  />
                  {cat.reply === undefined && (
                    <>
                      <TextField
                        label={t('apps.classify.prompt')}
                        value={cat.prompt ?? ''}
                        onChange={(prompt) => setCategory(i, { prompt: prompt || undefined })}
                        multiline
                        rows={2}
                        hint={<span>{t('apps.classify.promptHint')}</span>}
                      />
                      <CheckField
                        label={t('apps.classify.ownDatasets')}
                        checked={cat.datasets !== undefined}
                        onChange={(on) => setCategory(i, { datasets: on ? [] : undefined })}
                      />
                      {cat.datasets && (
                        <DatasetPicker
                          legend={t('apps.classify.datasets', { n: i + 1 })}
                          datasets={datasets}
                          value={cat.datasets}
                          onChange={(ids) => setCategory(i, { datasets: ids })}
                        />
                      )}
                    </>
                  )}
                  <div className="row">
                    <button type="button" className="danger" onClick={() => set({ categories: c.categories.filter((_, j) => j !== i) })}>
                      <span>{t('apps.classify.remove', { n: i + 1 })}</span>
                    </button>
                  </div>
                </fieldset>
              </li>
            ))}
          </ol>
          {c.categories.length < 2 && (
            <p className="notice warn ap-note">
              <span>{t('apps.classify.atLeastTwo')}</span>
            </p>
          )}
          <div className="row">
            <button
              type="button"
              className="secondary"
              disabled={c.categories.length >= 50}
              onClick={() => set({ categories: [...c.categories, newCategory(c.categories)] })}
            >
              <span>{t('apps.classify.add')}</span>
            </button>
          </div>
        </>
      )}
    </section>
  );
}
