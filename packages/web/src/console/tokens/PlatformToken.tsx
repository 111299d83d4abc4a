// The platform's own token at the gateway (the API marks it `platform`): every
// chat answer and all indexing go through it, so the page names it, and
// disabling or deleting it asks first, above the table, saying what stops.
import { useEffect, useRef, useState } from 'react';
import { ActionError } from '../../actions';
import { useLang } from '../../i18n';
import type { GatewayToken } from '../gateway-api';

export type PlatformTokenAction = 'disable' | 'delete';

/** The badge and the line under the platform token's name. */
export function PlatformTokenNote() {
  const { t } = useLang();
  return (
    <div className="platform-token-note">
      <span className="badge warn">{t('tokens.platformBadge')}</span>
      <small className="muted">
        <span>{t('tokens.platformNote')}</span>
      </small>
    </div>
  );
}

/** The question before the platform token is disabled or deleted: `act` on yes, `onClose` either way. */
export function PlatformTokenConfirm({
  token,
  action,
  act,
  onClose,
}: {
  token: GatewayToken;
  action: PlatformTokenAction;
  act: () => Promise<void>;
  onClose: () => void;
}) {
  const { t } = useLang();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.scrollIntoView({ block: 'nearest' });
    box.current?.focus();
  }, []);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await act();
      onClose();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <div
      ref={box}
      tabIndex={-1}
      className="notice warn stack platform-token-confirm"
      role="alertdialog"
      aria-label={t(action === 'disable' ? 'tokens.disableNamed' : 'common.deleteNamed', { name: token.name })}
    >
      <strong>{t(action === 'disable' ? 'tokens.platformDisableTitle' : 'tokens.platformDeleteTitle', { name: token.name })}</strong>
      <span>{t(action === 'disable' ? 'tokens.platformDisableAsk' : 'tokens.platformDeleteAsk')}</span>
      <div className="row">
        <button type="button" className="danger" disabled={busy} onClick={confirm}>
          <span>{t(action === 'disable' ? 'tokens.platformDisableYes' : 'tokens.platformDeleteYes')}</span>
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={onClose}>
          <span>{t('common.cancel')}</span>
        </button>
      </div>
      <ActionError error={error} />
    </div>
  );
}
