// /chat?appId=&chatId=: the signed-in user chatting with one of the team's
// applications: its chats on the side, new chat, open and delete one.
import { useCallback, useMemo, useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { api, withQuery, type PublicApp } from '../api';
import { useLang } from '../i18n';
import { Boundary, Loading, useLoad } from '../ui';
import { ChatPanel } from './ChatPanel';
import { newId, variablesOf } from './messages-model';
import { sessionTransport, type ChatTransport } from './transport';
import './chat.css';

export function ChatPage() {
  const { t } = useLang();
  const params = new URLSearchParams(useSearch());
  const appId = params.get('appId') ?? '';
  if (!appId)
    return (
      <p>
        <Link href="~/apps">
          <span>{t('chat.notFoundApp')}</span>
        </Link>
      </p>
    );
  return <AppChat key={appId} appId={appId} chatId={params.get('chatId') ?? ''} />;
}

function AppChat({ appId, chatId }: { appId: string; chatId: string }) {
  const { t } = useLang();
  const [, navigate] = useLocation();
  const { data: app } = useLoad(() => api<PublicApp>(withQuery('/api/core/app/detail', { appId })), [appId]);
  const transport = useMemo(() => sessionTransport(appId), [appId]);
  const [historyVersion, setHistoryVersion] = useState(0);
  const [showHistory, setShowHistory] = useState(false);
  const open = useCallback((id: string) => navigate(withQuery('/', { appId, chatId: id }), { replace: !chatId }), [appId, chatId, navigate]);
  // A chat has an id from the start, so that its first turn is stored.
  const [fresh] = useState(newId);
  const current = chatId || fresh;
  if (!app) return <Loading />;
  const fromExtraction = new Set(app.extract?.fields.map((f) => f.key) ?? []);
  const variableNames = variablesOf(app.systemPrompt).filter((v) => !fromExtraction.has(v));
  return (
    <div className={`chat-page${showHistory ? ' history-open' : ''}`}>
      <div className="chat-head row">
        <h1>{app.name}</h1>
        <span className="grow" />
        <button type="button" className="secondary history-toggle" aria-expanded={showHistory} onClick={() => setShowHistory(!showHistory)}>
          <span>{t('chat.history')}</span>
        </button>
        <button type="button" className="secondary" onClick={() => navigate(withQuery('/', { appId, chatId: newId() }))}>
          <span>{t('chat.newChat')}</span>
        </button>
        <Link href={`~/apps/${encodeURIComponent(appId)}`}>
          <span>{t('chat.settings')}</span>
        </Link>
      </div>
      <aside className="chat-history" aria-label={t('chat.history')}>
        <Boundary>
          <History transport={transport} current={current} version={historyVersion} onOpen={(id) => (setShowHistory(false), open(id))} onDeleted={(id) => id === current && navigate(withQuery('/', { appId, chatId: newId() }))} />
        </Boundary>
      </aside>
      <Boundary>
        <StoredChat key={current} transport={transport} chatId={current} isNew={!chatId} variableNames={variableNames} onTurn={() => (chatId ? undefined : open(current), setHistoryVersion((v) => v + 1))} />
      </Boundary>
    </div>
  );
}

/** A chat with its stored messages loaded first (none for a new one). */
export function StoredChat({ transport, chatId, isNew, variableNames, onTurn }: { transport: ChatTransport; chatId: string; isNew: boolean; variableNames: string[]; onTurn: () => void }) {
  const { data: initial } = useLoad(() => (isNew ? Promise.resolve([]) : transport.records(chatId)), [chatId]);
  if (!initial) return <Loading />;
  return <ChatPanel transport={transport} chatId={chatId} initial={initial} variableNames={variableNames} onTurn={onTurn} />;
}

export function History({ transport, current, version, onOpen, onDeleted }: { transport: ChatTransport; current: string; version: number; onOpen: (chatId: string) => void; onDeleted: (chatId: string) => void }) {
  const { t } = useLang();
  const { data, reload } = useLoad(() => transport.histories(), [transport, version]);
  const [error, setError] = useState('');
  if (!data) return <Loading />;
  const remove = async (chatId: string, title: string) => {
    if (!confirm(t('common.confirmDelete', { name: title }))) return;
    setError('');
    try {
      await transport.remove(chatId);
      await reload();
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
    </div>
  );
}
