// Delete with a confirmation in place (no browser dialog): the first press
// asks, the second deletes; the platform's message shows if it fails.
import { useState } from 'react';
import { useLang } from '../i18n';
import { ActionError } from './ActionError';

export function ConfirmDelete({ name, onDelete }: { name: string; onDelete: () => Promise<void> }) {
  const { t } = useLang();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await onDelete();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  if (!asking)
    return (
      <button type="button" className="danger" aria-label={t('apps.deleteNamed', { name })} onClick={() => setAsking(true)}>
        <span>{t('common.delete')}</span>
      </button>
    );
  return (
    <div className="ap-confirm" role="group" aria-label={t('apps.deleteNamed', { name })}>
      <span>{t('common.confirmDelete', { name })}</span>
      <span className="row">
        <button type="button" className="danger" disabled={busy} onClick={confirm}>
          <span>{t('apps.confirmDelete')}</span>
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={() => setAsking(false)}>
          <span>{t('common.cancel')}</span>
        </button>
      </span>
      <ActionError error={error} />
    </div>
  );
}
