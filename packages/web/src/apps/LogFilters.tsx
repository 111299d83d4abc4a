// The chat log's filter bar: feedback, source, share link, a period of days
// and a text search. getChatLogs and exportChatLogs take the same filters, so
// the list and its export links select the same chats.
import type { ChatLogsBody, ChatSource } from '@kbchat/contracts';
import { useId } from 'react';
import { useLang } from '../i18n';
import { SelectField } from './fields';
import { useShareLinks } from './queries';

export interface LogFilter {
  feedback: 'all' | 'any' | 'good' | 'bad';
  source: '' | ChatSource;
  shareId: string;
  /** Days as a date input holds them (YYYY-MM-DD, the reader's calendar); '' for none. */
  from: string;
  to: string;
  search: string;
}

export const NO_FILTER: LogFilter = { feedback: 'all', source: '', shareId: '', from: '', to: '', search: '' };
const FEEDBACK = ['all', 'any', 'good', 'bad'] as const;
const SOURCES = ['', 'online', 'api', 'share'] as const;

export const isFiltered = (f: LogFilter) => (Object.keys(NO_FILTER) as (keyof LogFilter)[]).some((k) => f[k].trim() !== NO_FILTER[k]);

/** The day's first or last millisecond in the reader's time zone (the date they picked), as epoch ms. */
const dayEdge = (day: string, end: boolean) => (day ? new Date(`${day}T${end ? '23:59:59.999' : '00:00:00'}`).getTime() : undefined);

/** The filters as the platform takes them, none left empty: the same for the list's body and the export's query. */
export function filterParams(f: LogFilter): Pick<ChatLogsBody, 'feedback' | 'source' | 'shareId' | 'searchText'> & { dateStart?: number; dateEnd?: number } {
  const start = dayEdge(f.from, false);
  const end = dayEdge(f.to, true);
  return {
    ...(f.feedback !== 'all' ? { feedback: f.feedback } : {}),
    ...(f.source ? { source: f.source } : {}),
    ...(f.shareId ? { shareId: f.shareId } : {}),
    ...(start !== undefined && !Number.isNaN(start) ? { dateStart: start } : {}),
    ...(end !== undefined && !Number.isNaN(end) ? { dateEnd: end } : {}),
    ...(f.search.trim() ? { searchText: f.search.trim() } : {}),
  };
}

export function LogFilters({ appId, filter, onChange }: { appId: string; filter: LogFilter; onChange: (f: LogFilter) => void }) {
  const { t } = useLang();
  const id = useId();
  // The links are only a choice among filters: while they load, or if they fail, the rest still filters.
  const { data: links } = useShareLinks(appId);
  const set = (patch: Partial<LogFilter>) => onChange({ ...filter, ...patch });
  return (
    <div className="toolbar ap-filters" role="group" aria-label={t('logs.filters')}>
      <SelectField
        label={t('logs.filter.feedback')}
        value={filter.feedback}
        onChange={(v) => set({ feedback: v as LogFilter['feedback'] })}
        options={FEEDBACK.map((f) => ({ value: f, label: t(`logs.filter.feedback.${f}`) }))}
      />
      <SelectField
        label={t('logs.filter.source')}
        value={filter.source}
        onChange={(v) => set({ source: v as LogFilter['source'] })}
        options={SOURCES.map((s) => ({ value: s, label: s ? t(`logs.source.${s}`) : t('logs.filter.source.all') }))}
      />
      {links && links.length > 0 && (
        <SelectField
          label={t('logs.filter.share')}
          value={filter.shareId}
          onChange={(shareId) => set({ shareId })}
          options={[{ value: '', label: t('logs.filter.share.all') }, ...links.map((l) => ({ value: l.shareId, label: l.name }))]}
        />
      )}
      <div className="ap-field">
        <label htmlFor={`${id}-from`}>
          <span>{t('logs.filter.from')}</span>
        </label>
        <input id={`${id}-from`} type="date" value={filter.from} max={filter.to || undefined} onChange={(e) => set({ from: e.target.value })} />
      </div>
      <div className="ap-field">
        <label htmlFor={`${id}-to`}>
          <span>{t('logs.filter.to')}</span>
        </label>
        <input id={`${id}-to`} type="date" value={filter.to} min={filter.from || undefined} onChange={(e) => set({ to: e.target.value })} />
      </div>
      <div className="ap-field grow">
        <label htmlFor={`${id}-search`}>
          <span>{t('logs.filter.search')}</span>
        </label>
        <input id={`${id}-search`} type="search" value={filter.search} maxLength={200} onChange={(e) => set({ search: e.target.value })} />
      </div>
      {isFiltered(filter) && (
        <button type="button" className="secondary" onClick={() => onChange(NO_FILTER)}>
          <span>{t('logs.filter.clear')}</span>
        </button>
      )}
    </div>
  );
}
