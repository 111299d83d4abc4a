// The pieces both chat pages share: a conversation with its stored messages
// loaded first, and the list of the caller's chats (open, delete).
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useState } from 'react';
import { useLang } from '../i18n';
import { keepPreviousData } from '../query';
import { Loading, Pager } from '../ui';
import { Conversation } from './Conversation';
import type { ChatTransport } from './transport';

const HISTORY_PAGE = 30;

/** A chat with its stored messages loaded first (none for a new one). */
export function StoredChat({
  transport,
  chatId,
  isNew,
  variableNames,
  onSent,
  onTurn,
  compact,
}: {
  transport: ChatTransport;
  chatId: string;
  isNew: boolean;
  variableNames: string[];
  onSent?: () => void;
  onTurn?: () => void;
  compact?: boolean;
}) {
  // Read once when a chat opens, and fresh each time (gcTime 0): the conversation goes on from what is stored, never from
  // a kept copy. `isNew` is left out of the key: a new chat's first turn stores it, and it must not be read again then.
  const { data: stored } = useQuery({
    queryKey: [...transport.key, chatId, 'stored'],
    queryFn: async () => {
      if (isNew) return { messages: [], variables: {} };
      const [messages, variables] = await Promise.all([transport.records(chatId), variableNames.length ? transport.variables(chatId) : {}]);
      return { messages, variables };
    },
    gcTime: 0,
    staleTime: Infinity,
  });
  if (!stored) return <Loading />;
  return (
    <Conversation
      transport={transport}
      chatId={chatId}
      initial={stored.messages}
      initialVariables={stored.variables}
      variableNames={variableNames}
      onSent={onSent}
      onTurn={onTurn}
      compact={compact}
    />
  );
}

/** The list of chats read again in place (no loading state between): after a turn, or a delete. */
export function useHistoryRefresh(transport: ChatTransport): () => Promise<void> {
  const client = useQueryClient();
  return useCallback(() => client.invalidateQueries({ queryKey: [...transport.key, 'histories'] }), [client, transport]);
}

export function History({
  transport,
  current,
  onOpen,
  onDeleted,
}: {
  transport: ChatTransport;
  current: string;
  onOpen: (chatId: string) => void;
  onDeleted: (chatId: string) => void;
}) {
  const { t } = useLang();
  const [offset, setOffset] = useState(0);
  const client = useQueryClient();
  const pageQuery = (at: number) => ({
    queryKey: [...transport.key, 'histories', { offset: at }],
    queryFn: ({ signal }: { signal: AbortSignal }) => transport.histories(at, HISTORY_PAGE, signal),
  });
  const { data: page } = useQuery({ ...pageQuery(offset), placeholderData: keepPreviousData });
  const reload = useHistoryRefresh(transport);
  const [error, setError] = useState('');
  if (!page) return <Loading />;
  const data = page.list;
  const remove = async (chatId: string, title: string) => {
    if (!confirm(t('common.confirmDelete', { name: title }))) return;
    setError('');
    try {
      await transport.remove(chatId);
      // The last chat of a later page gone: the page before it.
      if (data.length === 1 && offset > 0) {
        // Read afresh before it shows: its cached copy still counts the deleted chats (a Next to an empty page).
        const before = Math.max(0, offset - HISTORY_PAGE);
        await client.fetchQuery({ ...pageQuery(before), staleTime: 0 });
        setOffset(before);
      } else await reload();
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
