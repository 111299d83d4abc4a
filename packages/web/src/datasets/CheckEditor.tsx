// A check's question, the texts it should find (one a line) and its search
// settings. Expectations that pin ids (made through the API) are kept as they
// are and can only be removed here; rerank and query extension are kept as
// saved from the search test.
import { useState, type FormEvent } from 'react';
import type { CheckExpectation, CheckSettings } from '../api';
import { ActionError } from '../actions';
import { useLang } from '../i18n';
import { SearchBasicsFields, TextField, type SearchBasics } from './Field';

export interface CheckDraft {
  question: string;
  expected: CheckExpectation[];
  settings: Partial<CheckSettings>;
}

const pinned = (e: CheckExpectation) => !!(e.collectionId || e.dataId);

export function CheckEditor({ initial, onSave, onCancel }: { initial: CheckDraft; onSave: (d: CheckDraft) => Promise<void>; onCancel: () => void }) {
  const { t } = useLang();
  const [question, setQuestion] = useState(initial.question);
  const [texts, setTexts] = useState(
    initial.expected
      .filter((e) => !pinned(e))
      .map((e) => e.text ?? '')
      .join('\n'),
  );
  const [kept, setKept] = useState(initial.expected.filter(pinned));
  const [basics, setBasics] = useState<SearchBasics>({
    mode: initial.settings.searchMode ?? 'mixedRecall',
    similarity: String(initial.settings.similarity ?? 0),
    limit: String(initial.settings.limit ?? 5000),
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const labels = new Map(initial.expected.filter((e) => e.text && e.label).map((e) => [e.text!, e.label]));

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const lines = texts
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
      const expected = [...kept, ...lines.map((text) => ({ text, ...(labels.get(text) ? { label: labels.get(text) } : {}) }))];
      await onSave({
        question,
        expected,
        settings: {
          ...initial.settings,
          searchMode: basics.mode,
          similarity: Number(basics.similarity) || 0,
          limit: Number.parseInt(basics.limit, 10) || 5000,
        },
      });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card stack" onSubmit={submit}>
      <TextField label={t('checks.question')} value={question} onChange={(e) => setQuestion(e.target.value)} required maxLength={10000} rows={2} />
      <TextField label={t('checks.expected')} value={texts} onChange={(e) => setTexts(e.target.value)} rows={3} aria-describedby="ck-expected-help" />
      <p id="ck-expected-help" className="muted ds-small">
        <span>{t('checks.expectedHelp')}</span>
      </p>
      {kept.length > 0 && (
        <ul className="ck-pinned">
          {kept.map((e, i) => (
            <li key={i} className="row">
              <ExpectationText e={e} />
              <button type="button" className="secondary" onClick={() => setKept(kept.filter((_, j) => j !== i))}>
                <span>{t('common.delete')}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <fieldset className="ds-grid3">
        <legend>{t('checks.settings')}</legend>
        <SearchBasicsFields value={basics} onChange={setBasics} />
      </fieldset>
      <div className="row">
        <button type="submit" disabled={busy || !question.trim()}>
          <span>{busy ? t('checks.saving') : t('checks.saveCheck')}</span>
        </button>
        <button type="button" className="secondary" onClick={onCancel} disabled={busy}>
          <span>{t('common.cancel')}</span>
        </button>
      </div>
      <ActionError error={error} />
    </form>
  );
}

/** What an expectation asks for, in words. */
export function ExpectationText({ e }: { e: CheckExpectation }) {
  const { t } = useLang();
  return (
    <span className="ck-expectation">
      {e.text && <q className="ck-quote">{e.text}</q>}
      {e.collectionId && <span className="muted">{t('checks.expectedCollection', { id: e.label ?? e.collectionId })}</span>}
      {e.dataId && <span className="muted">{t('checks.expectedData', { id: e.dataId })}</span>}
      {e.text && e.label && !e.collectionId && <span className="muted">{e.label}</span>}
    </span>
  );
}
