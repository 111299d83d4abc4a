// What every page does with an action: its failure next to its control, in the
// platform's own words, delete with a confirmation in place (no browser
// dialog: the first press asks, the second deletes), and a form's Save and Cancel.
import { useState } from 'react';
import { ApiError } from './api';
import { useLang } from './i18n';

export function ActionError({ error, className = '' }: { error: unknown; className?: string }) {
  const { t } = useLang();
  if (!error) return null;
  const message = error instanceof ApiError && error.status === 0 ? t('error.network') : (error as Error).message || String(error);
  return (
    <p role="alert" className={`error action-error ${className}`}>
      <span>{message}</span>
    </p>
  );
}

export function DeleteButton({ name, onDelete }: { name: string; onDelete: () => Promise<void> }) {
  const { t } = useLang();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await onDelete();
      setAsking(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (!asking)
    return (
      <button type="button" className="danger" aria-label={t('common.deleteNamed', { name })} onClick={() => setAsking(true)}>
        <span>{t('common.delete')}</span>
      </button>
    );
  return (
    <div className="confirm-delete" role="group" aria-label={t('common.deleteNamed', { name })}>
      <span>{t('common.confirmDelete', { name })}</span>
      <span className="row">
        <button type="button" className="danger" disabled={busy} onClick={confirm}>
          <span>{t('common.confirmDeleteYes')}</span>
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={() => setAsking(false)}>
          <span>{t('common.cancel')}</span>
        </button>
      </span>
      <ActionError error={error} />
    </div>
  );
}

/** A form's Save and Cancel, the Save button saying so while the form is sent. */
export function FormButtons({
  busy,
  label,
  busyLabel,
  cancelLabel,
  onCancel,
}: {
  busy: boolean;
  label: string;
  busyLabel: string;
  cancelLabel: string;
  onCancel: () => void;
}) {
  return (
    <div className="row">
      <button type="submit" disabled={busy}>
        <span>{busy ? busyLabel : label}</span>
      </button>
      <button type="button" className="secondary" onClick={onCancel}>
        <span>{cancelLabel}</span>
      </button>
    </div>
  );
}
