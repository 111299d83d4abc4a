// Extraction before the answer: off, or a model, a description and the
// fields to read from the question. Each value fills the system prompt's
// {{key}} of the same name and comes back to the caller as a new variable.
import { useRef } from 'react';
import { useLang } from '../i18n';
import { newField, type Extract } from './draft';
import { CheckField, SelectField, TextField } from './fields';
import { FIELD_TYPE_KEYS, optionsOf, type FieldType } from './labels';
import { ModelSelect } from './ModelSelect';
import type { SectionProps } from './section-props';

type Field = Extract['fields'][number];

export function ExtractSection({ draft, change, models, invalid }: SectionProps) {
  const { t } = useLang();
  const x = draft.extract;
  const last = useRef<Extract | null>(x);
  if (x) last.current = x;
  const set = (patch: Partial<Extract>) => change({ extract: { ...x!, ...patch } });
  const setField = (i: number, patch: Partial<Field>) => set({ fields: x!.fields.map((f, j) => (j === i ? { ...f, ...patch } : f)) });
  return (
    <section className={`card stack ap-section${invalid ? ' ap-invalid' : ''}`} aria-labelledby="ap-extract">
      <h2 id="ap-extract">{t('apps.section.extract')}</h2>
      <CheckField
        label={t('apps.extract.use')}
        checked={x !== null}
        onChange={(on) => change({ extract: on ? (last.current ?? { description: '', fields: [newField()] }) : null })}
        hint={<span>{t('apps.extract.hint')}</span>}
      />
      {x && (
        <>
          <ModelSelect
            label={t('apps.extract.model')}
            kind="llm"
            models={models}
            value={x.model}
            onChange={(model) => set({ model })}
            unset={t('apps.appModel')}
          />
          <TextField
            label={t('apps.extract.description')}
            value={x.description}
            onChange={(description) => set({ description })}
            multiline
            rows={2}
            maxLength={20_000}
          />
          <ol className="ap-items">
            {x.fields.map((f, i) => (
              <li key={i}>
                <fieldset className="stack">
                  <legend>
                    <span>{t('apps.extract.field', { n: i + 1 })}</span>
                  </legend>
                  <div className="ap-grid2">
                    <TextField
                      label={t('apps.extract.key')}
                      value={f.key}
                      onChange={(key) => setField(i, { key })}
                      maxLength={64}
                      hint={<span>{t('apps.extract.keyHint')}</span>}
                    />
                    <SelectField
                      label={t('apps.extract.type')}
                      value={f.type}
                      onChange={(type) => setField(i, { type: type as FieldType })}
                      options={optionsOf(FIELD_TYPE_KEYS, t)}
                    />
                  </div>
                  <TextField
                    label={t('apps.extract.fieldDescription')}
                    value={f.description}
                    onChange={(description) => setField(i, { description })}
                    maxLength={2000}
                  />
                  <CheckField label={t('apps.extract.required')} checked={f.required} onChange={(required) => setField(i, { required })} />
                  <TextField
                    label={t('apps.extract.enum')}
                    value={(f.enum ?? []).join('\n')}
                    onChange={(text) => setField(i, { enum: text === '' ? undefined : text.split('\n') })}
                    multiline
                    rows={2}
                    hint={<span>{t('apps.extract.enumHint')}</span>}
                  />
                  <div className="row">
                    <button type="button" className="danger" onClick={() => set({ fields: x.fields.filter((_, j) => j !== i) })}>
                      <span>{t('apps.extract.remove', { n: i + 1 })}</span>
                    </button>
                  </div>
                </fieldset>
              </li>
            ))}
          </ol>
          <div className="row">
            <button type="button" className="secondary" disabled={x.fields.length >= 50} onClick={() => set({ fields: [...x.fields, newField()] })}>
              <span>{t('apps.extract.add')}</span>
            </button>
          </div>
        </>
      )}
    </section>
  );
}
