// The pieces both chat pages share: a conversation with its stored messages
// loaded first, and the list of the caller's chats (open, delete).
import { useEffect, useState } from 'react';
import { useLang } from '../i18n';
import { Loading, Pager, useLoad } from '../ui';
import { Conversation } from './Conversation';
import type { ChatTransport } from './transport';

const HISTORY_PAGE = 30;

/** A chat with its stored messages loaded first (none for a new one). */
export function StoredChat({ transport, chatId, isNew, variableNames, onSent, onTurn, compact }: { transport: ChatTransport; chatId: string; isNew: boolean; variableNames: string[]; onSent?: () => void; onTurn?: () => void; compact?: boolean }) {
  const { data: stored } = useLoad(
    async () => {
      if (isNew) return { messages: [], variables: {} };
      const [messages, variables] = await Promise.all([transport.records(chatId), variableNames.length ? transport.variables(chatId) : {}]);
      return { messages, variables };
    },
    [chatId],
  );
  if (!stored) return <Loading />;
  return <Conversation transport={transport} chatId={chatId} initial={stored.messages} initialVariables={stored.variables} variableNames={variableNames} onSent={onSent} onTurn={onTurn} compact={compact} />;
}

export function History({ transport, current, version, onOpen, onDeleted }: { transport: ChatTransport; current: string; version: number; onOpen: (chatId: string) => void; onDeleted: (chatId: string) => void }) {
  const { t } = useLang();
  const [offset, setOffset] = useState(0);
  const { data: page, reload } = useLoad(() => transport.histories(offset, HISTORY_PAGE), [transport, offset]);
  // After a turn the list is read again in place (no loading state between).
  useEffect(() => {
    if (version) void reload();
  }, [version, reload]);
  const [error, setError] = useState('');
  if (!page) return <Loading />;
  const data = page.list;
  const remove = async (chatId: string, title: string) => {
    if (!confirm(t('common.confirmDelete', { name: title }))) return;
    setError('');
    try {
      await transport.remove(chatId);
      // The last chat of a later page gone: the page before it.
      if (data.length === 1 && offset > 0) setOffset(Math.max(0, offset - HISTORY_PAGE));
      else await reload();
      onDeleted(chatId);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div className="stack">
      {error && (
        <p role="alert" className="error">
          <span>{error}</span>
        </p>
      )}
      {data.length === 0 ? (
        <p className="muted">
          <span>{t('chat.noHistory')}</span>
        </p>
      ) : (
        <ul className="history-list">
          {data.map((h) => (
            <li key={h.chatId} className={h.chatId === current ? 'current' : undefined}>
              <button type="button" className="link history-open" aria-current={h.chatId === current ? 'true' : undefined} onClick={() => onOpen(h.chatId)}>
                <span>{h.title || h.chatId}</span>
              </button>
              <button type="button" className="link" aria-label={`${t('chat.deleteChat')} ${h.title}`} onClick={() => remove(h.chatId, h.title)}>
                <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <Pager offset={offset} pageSize={HISTORY_PAGE} total={page.total} onOffset={setOffset} />
    </div>
  );
}
