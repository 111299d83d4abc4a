// Name, intro, the answering model and its parameters, and the system prompt
// with the {{variables}} it uses and where their values come from.
import { useLang } from '../i18n';
import { promptVariables } from './draft';
import { NumberField, TextField } from './fields';
import { ModelSelect } from './ModelSelect';
import type { SectionProps } from './section-props';

export function GeneralSection({ draft, change, models, invalid }: SectionProps) {
  const { t } = useLang();
  const llm = models.find((m) => m.kind === 'llm' && m.model === draft.model);
  const maxTemperature = llm?.maxTemperature ?? 2;
  const variables = promptVariables(draft.systemPrompt);
  const extracted = new Set(draft.extract?.fields.map((f) => f.key) ?? []);
  return (
    <section className={`card stack ap-section${invalid ? ' ap-invalid' : ''}`} aria-labelledby="ap-general">
      <h2 id="ap-general">{t('apps.section.general')}</h2>
      <div className="ap-grid2">
        <TextField label={t('common.name')} value={draft.name} onChange={(name) => change({ name })} required maxLength={200} />
        <ModelSelect label={t('apps.model')} kind="llm" models={models} value={draft.model} onChange={(model) => change({ model: model ?? '' })} />
      </div>
      <TextField label={t('apps.intro')} value={draft.intro} onChange={(intro) => change({ intro })} multiline rows={2} maxLength={5000} />
      <div className="ap-grid2">
        <NumberField
          label={t('apps.temperature')}
          value={draft.temperature}
          onChange={(temperature) => change({ temperature })}
          min={0}
          max={maxTemperature}
          step={0.1}
          placeholder={t('apps.modelDefault')}
          hint={<span>{llm?.maxTemperature !== undefined ? t('apps.temperature.hintMax', { max: maxTemperature }) : t('apps.temperature.hint')}</span>}
        />
        <NumberField
          label={t('apps.maxToken')}
          value={draft.maxToken}
          onChange={(maxToken) => change({ maxToken })}
          min={1}
          max={llm?.maxResponse ?? 1_000_000}
          step={1}
          placeholder={llm?.maxResponse ? String(llm.maxResponse) : t('apps.modelDefault')}
          hint={<span>{llm?.maxResponse ? t('apps.maxToken.hintModel', { n: llm.maxResponse }) : t('apps.maxToken.hint')}</span>}
        />
      </div>
      <TextField
        label={t('apps.systemPrompt')}
        value={draft.systemPrompt}
        onChange={(systemPrompt) => change({ systemPrompt })}
        multiline
        rows={7}
        maxLength={100_000}
        hint={
          variables.length === 0 ? (
            <span>{t('apps.variables.none')}</span>
          ) : (
            <div className="stack ap-variables">
              <div className="ap-placeholders">
                <span>{t('apps.variables.title')}</span>
                {variables.map((v) => (
                  <span key={v} className="ap-var">
                    <code className="ap-chip">{`{{${v}}}`}</code>
                    {extracted.has(v) && <span className="ap-small">{t('apps.variables.extracted')}</span>}
                  </span>
                ))}
              </div>
              <span>{t('apps.variables.where')}</span>
            </div>
          )
        }
      />
    </section>
  );
}
