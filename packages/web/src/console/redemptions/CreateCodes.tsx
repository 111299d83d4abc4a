// Makes a batch of top-up codes (name, amount each, how many), then shows the
// codes themselves this once: the gateway keeps only their hashes, so the
// panel says so and offers each code's Copy and a Copy all.
import type { CreateRedemptionsBody, RedemptionsCreated } from '@kbchat/contracts';
import { useState, type FormEvent } from 'react';
import { ActionError } from '../../actions';
import { useLang } from '../../i18n';
import { CopyButton } from '../../ui';
import { formatUnits, gatewayApi } from '../gateway-api';

/** What one create answered: the codes (shown once) and what they are worth. */
export interface NewCodes {
  keys: string[];
  name: string;
  /** Units each. */
  amount: number;
}

export function CreateCodesForm({ onCreated }: { onCreated: (made: NewCodes) => void }) {
  const { t } = useLang();
  const [name, setName] = useState('');
  const [amount, setAmount] = useState('');
  const [count, setCount] = useState('1');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const quota = Number(amount);
    const n = Number(count);
    if (amount.trim() === '' || !Number.isFinite(quota) || quota <= 0) return setError(new Error(t('redemptions.badAmount')));
    if (count.trim() === '' || !Number.isInteger(n) || n < 1 || n > 100) return setError(new Error(t('redemptions.badCount')));
    setBusy(true);
    setError(null);
    try {
      const made = await gatewayApi<RedemptionsCreated>('/api/redemptions', {
        json: { name: name.trim(), quota, count: n } satisfies CreateRedemptionsBody,
      });
      onCreated({ keys: made.keys, name: made.data[0]?.name ?? name.trim(), amount: made.data[0]?.quota ?? quota });
      setName('');
      setAmount('');
      setCount('1');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card stack" onSubmit={submit} aria-label={t('redemptions.createTitle')}>
      <strong>{t('redemptions.createTitle')}</strong>
      <div className="codes-form-grid">
        <label>
          <span>{t('redemptions.name')}</span>
          <input required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          <span>{t('redemptions.amount')}</span>
          <input required inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} />
        </label>
        <label>
          <span>{t('redemptions.count')}</span>
          <input required inputMode="numeric" value={count} onChange={(e) => setCount(e.target.value)} />
        </label>
      </div>
      <ActionError error={error} />
      <div className="row">
        <button type="submit" disabled={busy}>
          <span>{busy ? t('redemptions.creating') : t('redemptions.create')}</span>
        </button>
      </div>
    </form>
  );
}

/** The codes of one create, shown this once, each with its Copy, and all of them one a line. */
export function NewCodesPanel({ made, onClose }: { made: NewCodes; onClose: () => void }) {
  const { t } = useLang();
  return (
    <div className="notice warn stack new-codes" role="status">
      <p>
        <span>{t('redemptions.created', { n: made.keys.length, name: made.name, amount: formatUnits(made.amount) })}</span>{' '}
        <strong>{t('redemptions.shownOnce')}</strong>
      </p>
      <ol className="new-codes-list" aria-label={t('redemptions.newCodes')}>
        {made.keys.map((key) => (
          <li key={key}>
            <code className="secret" data-testid="new-code">
              {key}
            </code>
            <CopyButton text={key} />
          </li>
        ))}
      </ol>
      <div className="row">
        <CopyButton text={made.keys.join('\n')} label={t('redemptions.copyAll')} />
        <button type="button" className="link" onClick={onClose}>
          <span>{t('common.close')}</span>
        </button>
      </div>
    </div>
  );
}
