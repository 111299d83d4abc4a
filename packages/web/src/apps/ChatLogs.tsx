// /apps/:appId/logs: every chat of the application for its team (signed-in,
// API and share-link visitors'), newest first, paged by the platform, with its
// feedback counts; a chat opens in place, read-only, each answer with its steps.
import type { ChatLogsBody } from '@kbchat/contracts';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, type Page, type PublicChatLog } from '../api';
import { MessageView } from '../chat/Message';
import { sessionTransport } from '../chat/transport';
import '../chat/chat.css';
import { useLang } from '../i18n';
import { keepPreviousData } from '../query';
import { Boundary, formatTime, Loading, Pager } from '../ui';
import { AppSubpage } from './AppSubpage';

const PAGE = 20;

export function ChatLogsPage({ appId }: { appId: string }) {
  const { t, lang } = useLang();
  const [offset, setOffset] = useState(0);
  const { data } = useQuery({
    queryKey: ['apps', appId, 'chat-logs', { offset }],
    queryFn: ({ signal }) => api<Page<PublicChatLog>>('/api/core/app/getChatLogs', { json: { appId, offset, pageSize: PAGE } satisfies ChatLogsBody, signal }),
    placeholderData: keepPreviousData,
  });
  const [open, setOpen] = useState<string | null>(null);
  return (
    <AppSubpage appId={appId} title={t('logs.title')}>
      {!data ? (
        <Loading />
      ) : data.list.length === 0 ? (
        <p>
          <span>{t('logs.none')}</span>
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
                <LogRow
                  key={c.chatId}
                  appId={appId}
                  log={c}
                  open={open === c.chatId}
                  onToggle={() => setOpen(open === c.chatId ? null : c.chatId)}
                  lang={lang}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && <Pager offset={offset} pageSize={PAGE} total={data.total} onOffset={setOffset} />}
    </AppSubpage>
  );
}

function LogRow({ appId, log, open, onToggle, lang }: { appId: string; log: PublicChatLog; open: boolean; onToggle: () => void; lang: string }) {
  const { t } = useLang();
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

function ChatTranscript({ appId, chatId }: { appId: string; chatId: string }) {
  const transport = useMemo(() => sessionTransport(appId), [appId]);
  const { data } = useQuery({ queryKey: ['apps', appId, 'chat-logs', chatId], queryFn: () => transport.records(chatId) });
  if (!data) return <Loading />;
  return (
    <div className="chat-messages log-transcript">
      {data.map((m) => (
        <MessageView key={m.id} message={m} onTrace={(answer) => transport.modelCalls(chatId, answer.id)} />
      ))}
    </div>
  );
}
