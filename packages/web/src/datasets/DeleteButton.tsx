// Delete with a confirmation in place (no browser dialog): the first press
// asks, the second deletes; the platform's message shows if it fails.
import { useState } from 'react';
import { useLang } from '../i18n';
import { ActionError } from './ActionError';

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
      <button type="button" className="danger" aria-label={t('datasets.deleteNamed', { name })} onClick={() => setAsking(true)}>
        <span>{t('common.delete')}</span>
      </button>
    );
  return (
    <div className="ds-confirm" role="group" aria-label={t('datasets.deleteNamed', { name })}>
      <span>{t('common.confirmDelete', { name })}</span>
      <span className="row">
        <button type="button" className="danger" disabled={busy} onClick={confirm}>
          <span>{t('datasets.confirmDelete')}</span>
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={() => setAsking(false)}>
          <span>{t('common.cancel')}</span>
        </button>
      </span>
      <ActionError error={error} />
    </div>
  );
}

