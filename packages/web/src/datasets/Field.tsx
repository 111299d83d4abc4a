// Form pieces of the dataset pages. A textarea with its label beside it
// rather than around it: a label that wraps a textarea also holds the
// textarea's text, which then becomes part of the control's accessible name.
// The search settings that the search test and a saved check share.
import { useId, type TextareaHTMLAttributes } from 'react';
import type { CheckSettings } from '../api';
import { useLang } from '../i18n';

export type SearchMode = CheckSettings['searchMode'];
export const SEARCH_MODES: SearchMode[] = ['embedding', 'fullTextRecall', 'mixedRecall'];

/** The search's mode, least similarity and token budget, as the search test and a check edit them (numbers kept as typed). */
export interface SearchBasics {
  mode: SearchMode;
  similarity: string;
  limit: string;
}

export function SearchBasicsFields({ value, onChange }: { value: SearchBasics; onChange: (next: SearchBasics) => void }) {
  const { t } = useLang();
  return (
    <>
      <label>
        <span>{t('datasets.searchTest.mode')}</span>
        <select value={value.mode} onChange={(e) => onChange({ ...value, mode: e.target.value as SearchMode })}>
          {SEARCH_MODES.map((m) => (
            <option key={m} value={m}>
              {t(`datasets.mode.${m}`)}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('datasets.searchTest.similarity')}</span>
        <input type="number" min={0} max={1} step={0.01} value={value.similarity} onChange={(e) => onChange({ ...value, similarity: e.target.value })} />
      </label>
      <label>
        <span>{t('datasets.searchTest.limit')}</span>
        <input type="number" min={1} max={100000} step={1} value={value.limit} onChange={(e) => onChange({ ...value, limit: e.target.value })} />
      </label>
    </>
  );
}

export function TextField({ label, ...props }: { label: string } & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <div className="ds-field">
      <label htmlFor={id}>
        <span>{label}</span>
      </label>
      <textarea id={id} {...props} />
    </div>
  );
}
