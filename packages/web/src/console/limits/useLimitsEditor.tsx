// What a page needs to show and edit rate limits in its rows: a summary per
// row, a "Limits" button per row, and the editor (with a notice once saved)
// where the page puts it. One list for the page (limits.ts), administrators only.
import { useState, type ReactNode } from 'react';
import { useLang } from '../../i18n';
import { LimitsEditor } from './LimitsEditor';
import { limitsOf, limitsSummary, useRateLimits, type RateLimitScope } from './limits';

interface Target {
  scope: RateLimitScope;
  subject: string | number;
  name: string;
}

export function useLimitsEditor(enabled: boolean) {
  const { t } = useLang();
  const limits = useRateLimits(enabled);
  const [target, setTarget] = useState<Target | null>(null);
  const [saved, setSaved] = useState('');

  const editor: ReactNode = target && (
    <LimitsEditor
      key={`${target.scope}:${target.subject}`}
      {...target}
      start={limitsOf(limits.data, target.scope, target.subject)}
      list={limits.data}
      onDone={(fresh) => {
        setTarget(null);
        if (fresh === undefined) return;
        setSaved(t('limits.saved', { name: target.name }));
        limits.reload();
      }}
    />
  );
  const notice: ReactNode = saved && (
    <p role="status" className="notice ok">
      <span>{saved}</span>
    </p>
  );
  const button = (scope: RateLimitScope, subject: string | number, name: string): ReactNode =>
    enabled && (
      <button
        type="button"
        className="secondary"
        aria-label={t('limits.buttonNamed', { name })}
        onClick={() => {
          setSaved('');
          setTarget({ scope, subject, name });
        }}
      >
        <span>{t('limits.button')}</span>
      </button>
    );
  /** The row's limits in a few words, or "No limits". */
  const summary = (scope: RateLimitScope, subject: string | number): string => limitsSummary(limitsOf(limits.data, scope, subject), t) ?? t('limits.none');
  return { editing: target !== null, editor, notice, button, summary };
}
