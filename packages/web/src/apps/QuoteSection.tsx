// How the quotes found are written for the model: the template of one quote
// and the prompt around them, each with its placeholders and the platform's
// default, which applies while the field is empty.
import { useLang, type MessageKey } from '../i18n';
import { DEFAULT_QUOTE_PROMPT, DEFAULT_QUOTE_TEMPLATE, QUOTE_PROMPT_PLACEHOLDERS, QUOTE_TEMPLATE_PLACEHOLDERS } from './draft';
import { Placeholders, TextField } from './fields';
import type { SectionProps } from './section-props';

export function QuoteSection({ draft, change, invalid }: SectionProps) {
  const { t } = useLang();
  return (
    <section className={`card stack ap-section${invalid ? ' ap-invalid' : ''}`} aria-labelledby="ap-quote">
      <h2 id="ap-quote">{t('apps.section.quote')}</h2>
      <QuoteText
        label="apps.quoteTemplate"
        value={draft.quoteTemplate}
        fallback={DEFAULT_QUOTE_TEMPLATE}
        placeholders={QUOTE_TEMPLATE_PLACEHOLDERS}
        maxLength={20_000}
        onChange={(quoteTemplate) => change({ quoteTemplate })}
      />
      <QuoteText
        label="apps.quotePrompt"
        value={draft.quotePrompt}
        fallback={DEFAULT_QUOTE_PROMPT}
        placeholders={QUOTE_PROMPT_PLACEHOLDERS}
        maxLength={50_000}
        onChange={(quotePrompt) => change({ quotePrompt })}
      />
    </section>
  );
}

function QuoteText(props: {
  label: MessageKey;
  value: string | undefined;
  fallback: string;
  placeholders: string[];
  maxLength: number;
  onChange: (value: string | undefined) => void;
}) {
  const { t } = useLang();
  const empty = props.value === undefined;
  return (
    <div className="stack ap-quote">
      <TextField
        label={t(props.label)}
        value={props.value ?? ''}
        // Empty is the default: the platform refuses an empty text.
        onChange={(v) => props.onChange(v === '' ? undefined : v)}
        multiline
        rows={props.fallback.length > 200 ? 7 : 5}
        code
        maxLength={props.maxLength}
        placeholder={props.fallback}
        hint={<Placeholders label={t('apps.placeholders')} names={props.placeholders} />}
      />
      <div className="row">
        <span className={`badge${empty ? ' ok' : ''}`}>{empty ? t('apps.quote.usingDefault') : t('apps.quote.custom')}</span>
        {empty ? (
          <button
            type="button"
            className="secondary"
            aria-label={t('apps.quote.editDefaultNamed', { what: t(props.label) })}
            onClick={() => props.onChange(props.fallback)}
          >
            <span>{t('apps.quote.editDefault')}</span>
          </button>
        ) : (
          <button
            type="button"
            className="secondary"
            aria-label={t('apps.quote.resetNamed', { what: t(props.label) })}
            onClick={() => props.onChange(undefined)}
          >
            <span>{t('apps.quote.reset')}</span>
          </button>
        )}
      </div>
    </div>
  );
}
