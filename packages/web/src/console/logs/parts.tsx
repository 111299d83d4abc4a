// Pieces the list and the detail share: a time to the second, a user,
// token or channel by name (its id when deleted), linking to its requests,
// and the note on a row a fallback answered.
import { Link } from 'wouter';
import type { PublicLog } from '@kbchat/contracts';
import { useLang } from '../../i18n';

/** Failed: refused or failed (400 and above), or broken after its status was sent (a stream cut midway). */
export const failed = (r: PublicLog): boolean => r.status >= 400 || r.error !== null;

/** Logs are read to the second: the date and the time with seconds, in the reader's language. */
export function formatLogTime(ms: number, lang: string): string {
  return new Date(ms).toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-US', { dateStyle: 'medium', timeStyle: 'medium' });
}

/** On a row a fallback answered (its `model`): the model the caller asked for; a badge in the detail, a line of text in the list's narrow cell. */
export function FallbackFor({ model, badge = false }: { model: string; badge?: boolean }) {
  const { t } = useLang();
  return (
    <span className={badge ? 'badge warn logs-tag' : 'logs-fallback'} data-testid="fallback-for" title={t('requestLogs.fallbackHint', { model })}>
      {t('requestLogs.fallbackFor', { model })}
    </span>
  );
}

export function NameOf({ id, name, href }: { id: number | null; name: string | null; href?: string }) {
  const { t } = useLang();
  if (id === null) return <span className="muted">{t('requestLogs.none.value')}</span>;
  const text = name ?? t('requestLogs.deleted', { id });
  if (!href) return <span>{text}</span>;
  return (
    <Link href={href} title={t('requestLogs.filterBy', { what: text })}>
      <span>{text}</span>
    </Link>
  );
}
