// /apps/:appId/logs: every chat of the application for its team (signed-in,
// API and share-link visitors'), newest first, paged by the platform, with its
// feedback counts; filtered by feedback, source, share link, days and text
// (a change of filter goes back to the first page), exported with the same
// filters as CSV or JSON Lines; a chat opens in place, read-only, each answer
// with its steps and "Improve this answer" (LogTranscript.tsx).
import type { ChatLogsBody } from '@kbchat/contracts';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, withQuery, type Page, type PublicChatLog } from '../api';
import '../chat/chat.css';
import { useLang } from '../i18n';
import { keepPreviousData, useDebounced } from '../query';
import { Boundary, formatTime, Loading, Pager } from '../ui';
import { AppSubpage } from './AppSubpage';
import { filterParams, isFiltered, LogFilters, NO_FILTER, type LogFilter } from './LogFilters';
import { ChatTranscript } from './LogTranscript';

const PAGE = 20;

export function ChatLogsPage({ appId }: { appId: string }) {
  const { t, count } = useLang();
  const [filter, setFilter] = useState<LogFilter>(NO_FILTER);
  // The search settles before it is sent; the other filters apply at once.
  const search = useDebounced(filter.search);
  const params = filterParams({ ...filter, search });
  const filterKey = JSON.stringify(params);
  // The page belongs to the filters it was chosen under: other filters start again at the first.
  const [paged, setPaged] = useState({ filterKey, offset: 0 });
  const offset = paged.filterKey === filterKey ? paged.offset : 0;
  const { data } = useQuery({
    queryKey: ['apps', appId, 'chat-logs', { offset, ...params }],
    queryFn: ({ signal }) =>
      api<Page<PublicChatLog>>('/api/core/app/getChatLogs', { json: { appId, offset, pageSize: PAGE, ...params } satisfies ChatLogsBody, signal }),
    placeholderData: keepPreviousData,
  });
  const [open, setOpen] = useState<string | null>(null);
  const exportHref = (format: 'csv' | 'jsonl') => withQuery('/api/core/app/exportChatLogs', { appId, format, ...params });
  return (
    <AppSubpage appId={appId} title={t('logs.title')}>
      <LogFilters appId={appId} filter={filter} onChange={setFilter} />
      <div className="row">
        <p className="muted grow ap-note" aria-live="polite">
          <span>{data ? t('logs.total', { n: count(data.total) }) : ''}</span>
        </p>
        <span className="row">
          <a className="ap-button-link secondary" href={exportHref('csv')} download>
            <span>{t('logs.export.csv')}</span>
          </a>
          <a className="ap-button-link secondary" href={exportHref('jsonl')} download>
            <span>{t('logs.export.jsonl')}</span>
          </a>
        </span>
      </div>
      {!data ? (
        <Loading />
      ) : data.list.length === 0 ? (
        <p>
          <span>{isFiltered(filter) ? t('logs.noneMatch') : t('logs.none')}</span>
        </p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>{t('logs.chat')}</th>
                <th>{t('logs.source')}</th>
                <th>{t('logs.messages')}</th>
                <th>{t('logs.feedback')}</th>
                <th>{t('logs.updated')}</th>
              </tr>
            </thead>
            <tbody>
              {data.list.map((c) => (
                <LogRow key={c.chatId} appId={appId} log={c} open={open === c.chatId} onToggle={() => setOpen(open === c.chatId ? null : c.chatId)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && <Pager offset={offset} pageSize={PAGE} total={data.total} onOffset={(o) => setPaged({ filterKey, offset: o })} />}
    </AppSubpage>
  );
}

function LogRow({ appId, log, open, onToggle }: { appId: string; log: PublicChatLog; open: boolean; onToggle: () => void }) {
  const { t, lang } = useLang();
  return (
    <>
      <tr>
        <td>
          <button type="button" className="link" aria-expanded={open} onClick={onToggle}>
            <span>{log.title || log.chatId}</span>
          </button>
        </td>
        <td>
          <span className="badge">{t(`logs.source.${log.source}`)}</span>
        </td>
        <td>
          <span>{log.messageCount}</span>
        </td>
        <td>
          <span>{t('logs.feedbackCounts', { good: log.userGoodFeedbackCount, bad: log.userBadFeedbackCount })}</span>
        </td>
        <td>
          <span>{formatTime(log.updateTime, lang)}</span>
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={5}>
            <Boundary>
              <ChatTranscript appId={appId} chatId={log.chatId} />
            </Boundary>
          </td>
        </tr>
      )}
    </>
  );
}
