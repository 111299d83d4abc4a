// A question and its curated answer, as the annotations page adds and edits
// one and the chat log's "Improve this answer" makes one: saved by the caller,
// its failure (the platform's words) shown beside the buttons, the text kept.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ActionError } from '../actions';
import { useLang } from '../i18n';
import { TextField } from './fields';

export interface QuestionAnswer {
  question: string;
  answer: string;
}

export function AnnotationForm({
  title,
  hint,
  initial,
  onSave,
  onCancel,
}: {
  /** The form's accessible name, shown as its heading. */
  title: string;
  hint?: string;
  initial: QuestionAnswer;
  onSave: (value: QuestionAnswer) => Promise<void>;
  onCancel: () => void;
}) {
  const { t } = useLang();
  const [question, setQuestion] = useState(initial.question);
  const [answer, setAnswer] = useState(initial.answer);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const ready = question.trim() !== '' && answer.trim() !== '';
  const form = useRef<HTMLFormElement>(null);
  // Opened under an answer in a scrolling transcript, or in a long list: brought into view whole, Save included.
  useEffect(() => {
    form.current?.scrollIntoView?.({ block: 'nearest' });
  }, []);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!ready) return;
    setBusy(true);
    setError(null);
    try {
      await onSave({ question: question.trim(), answer: answer.trim() });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form ref={form} className="ap-annotation-form stack" aria-label={title} onSubmit={submit}>
      <h3>
        <span>{title}</span>
      </h3>
      {hint && (
        <p className="muted ap-hint">
          <span>{hint}</span>
        </p>
      )}
      <TextField label={t('annotations.question')} value={question} onChange={setQuestion} multiline rows={2} required maxLength={10_000} />
      <TextField label={t('annotations.answer')} value={answer} onChange={setAnswer} multiline rows={5} required maxLength={100_000} />
      <ActionError error={error} />
      <div className="row">
        <button type="submit" disabled={busy || !ready}>
          <span>{t('common.save')}</span>
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={onCancel}>
          <span>{t('common.cancel')}</span>
        </button>
      </div>
    </form>
  );
}
