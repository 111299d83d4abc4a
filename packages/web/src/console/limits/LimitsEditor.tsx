// Edits one subject's rate limits (RPM, TPM, RPD) and, for a token or a user,
// its budget per day, week or month. Saved whole (PUT); a form left empty
// removes the subject's row (DELETE). `onDone` gets the row the gateway then
// holds (null once removed), or undefined when cancelled. It says where the
// limits are counted (Redis, the shared database, the process), and when
// they are counted per process because Redis is away.
import { useState, type FormEvent } from 'react';
import type { RateLimitBody, RateLimitList } from '@kbchat/contracts';
import { ApiError } from '../../api';
import { ActionError, FormButtons } from '../../actions';
import { useLang } from '../../i18n';
import { gatewayApi } from '../gateway-api';
import { limitsPath, type RateLimit, type RateLimitScope } from './limits';
import './limits.css';

type Kind = 'rpm' | 'tpm' | 'rpd';
const KINDS: Kind[] = ['rpm', 'tpm', 'rpd'];
const PERIODS = ['day', 'week', 'month'] as const;

export function LimitsEditor({
  scope,
  subject,
  name,
  start,
  list,
  onDone,
}: {
  scope: RateLimitScope;
  subject: string | number;
  /** What the title calls the subject (a token's or user's name). */
  name: string;
  start: RateLimit | undefined;
  list: RateLimitList | undefined;
  onDone: (fresh: RateLimit | null | undefined) => void;
}) {
  const { t } = useLang();
  const [values, setValues] = useState<Record<Kind, string>>({
    rpm: start?.rpm == null ? '' : String(start.rpm),
    tpm: start?.tpm == null ? '' : String(start.tpm),
    rpd: start?.rpd == null ? '' : String(start.rpd),
  });
  const hasBudget = scope === 'token' || scope === 'user';
  const [budget, setBudget] = useState(start?.budget ? String(start.budget.amount) : '');
  const [period, setPeriod] = useState<(typeof PERIODS)[number]>(start?.budget?.period ?? 'month');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const body: RateLimitBody = {};
    for (const kind of KINDS) {
      const raw = values[kind].trim().replace(/[,_\s]/g, '');
      if (raw === '') continue;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1) return setError(new Error(t('limits.badNumber', { field: t(`limits.${kind}`) })));
      body[kind] = n;
    }
    if (hasBudget && budget.trim() !== '') {
      const amount = Number(budget.trim());
      if (!Number.isFinite(amount) || amount <= 0) return setError(new Error(t('limits.badBudget')));
      body.budget = { amount, period };
    }
    setBusy(true);
    setError(null);
    try {
      if (Object.keys(body).length > 0) onDone(await gatewayApi<RateLimit>(limitsPath(scope, subject), { method: 'PUT', json: body }));
      else {
        await gatewayApi(limitsPath(scope, subject), { method: 'DELETE' }).catch((err: unknown) => {
          // Nothing was set: what was wanted.
          if (!(err instanceof ApiError && err.status === 404)) throw err;
        });
        onDone(null);
      }
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const title = t('limits.title', { name });
  return (
    <form className="card stack limits-editor" onSubmit={save} aria-label={title}>
      <strong>{title}</strong>
      {list && (
        <p className="muted" data-testid="limits-counting">
          <span>{t(`limits.counting.${list.counting}`)}</span>
        </p>
      )}
      {list?.problem && (
        <p role="status" className="notice warn">
          <span>{t('limits.problem', { problem: list.problem })}</span>
        </p>
      )}
      <div className="limits-grid">
        {KINDS.map((kind) => (
          <div key={kind} className="limits-field">
            <label>
              <span>{t(`limits.${kind}`)}</span>
              <input
                inputMode="numeric"
                value={values[kind]}
                onChange={(e) => setValues({ ...values, [kind]: e.target.value })}
                placeholder={t('limits.none')}
                aria-describedby={kind === 'tpm' ? 'limits-tpm-hint' : undefined}
              />
            </label>
            {kind === 'tpm' && (
              <small id="limits-tpm-hint" className="muted">
                {t('limits.tpmHint')}
              </small>
            )}
          </div>
        ))}
        {hasBudget && (
          <div className="limits-budget">
            <label>
              <span>{t('limits.budget')}</span>
              <input
                inputMode="decimal"
                value={budget}
                onChange={(e) => setBudget(e.target.value)}
                placeholder={t('limits.none')}
                aria-describedby="limits-budget-hint"
              />
            </label>
            <label>
              <span>{t('limits.period')}</span>
              <select value={period} onChange={(e) => setPeriod(e.target.value as (typeof PERIODS)[number])}>
                {PERIODS.map((p) => (
                  <option key={p} value={p}>
                    {t(`limits.period.${p}`)}
                  </option>
                ))}
              </select>
            </label>
            <small id="limits-budget-hint" className="muted">
              {t('limits.budgetHint')}
            </small>
          </div>
        )}
      </div>
      <p className="muted">
        <span>{t('limits.empty')}</span>
      </p>
      <ActionError error={error} />
      <FormButtons busy={busy} label={t('limits.save')} busyLabel={t('limits.saving')} cancelLabel={t('common.cancel')} onCancel={() => onDone(undefined)} />
    </form>
  );
}
