// A signed-in user (any role) redeems a top-up code into their own balance,
// beside the balance the Tokens page shows. The gateway's answer says what
// was added and the balance now; the balance above, the users list and the
// codes list are read again, since each of them has changed.
import type { ToppedUp, TopupBody } from '@kbchat/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ActionError } from '../../actions';
import { useLang } from '../../i18n';
import { formatUnits, gatewayApi } from '../gateway-api';
import './redemptions.css';

export function RedeemCode() {
  const { t } = useLang();
  const client = useQueryClient();
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<ToppedUp | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const code = key.trim();
    if (!code) return;
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const r = await gatewayApi<ToppedUp>('/api/user/topup', { json: { key: code } satisfies TopupBody });
      setDone(r);
      setKey('');
      // The balance (OwnBalance reads /api/auth/me), a user's row, and the code's row.
      for (const queryKey of [['me'], ['users'], ['redemptions']]) void client.invalidateQueries({ queryKey });
    } catch (err) {
      // The gateway's own words: unknown, already used or disabled are one answer.
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card stack redeem-code" onSubmit={submit} aria-label={t('redemptions.redeemTitle')}>
      <strong>{t('redemptions.redeemTitle')}</strong>
      <div className="row redeem-code-row">
        <label className="grow">
          <span>{t('redemptions.redeemCode')}</span>
          <input
            placeholder={t('redemptions.redeemHint')}
            autoComplete="off"
            spellCheck={false}
            maxLength={200}
            value={key}
            onChange={(e) => setKey(e.target.value)}
          />
        </label>
        <button type="submit" disabled={busy || !key.trim()}>
          <span>{busy ? t('redemptions.redeeming') : t('redemptions.redeem')}</span>
        </button>
      </div>
      {done && (
        <p role="status" className="notice ok">
          <span>{t('redemptions.redeemed', { added: formatUnits(done.added), balance: formatUnits(done.balance) })}</span>
        </p>
      )}
      <ActionError error={error} />
    </form>
  );
}
