// /chat?appId=&chatId=: the signed-in user chatting with one of the team's
// applications: its chats on the side, new chat, open and delete one.
import { useCallback, useMemo, useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { withQuery } from '../api';
import { useAppDetail } from '../apps/queries';
import { useLang } from '../i18n';
import { Boundary, Loading } from '../ui';
import { History, StoredChat, useHistoryRefresh } from './History';
import { appVariables, newId } from './messages-model';
import { sessionTransport } from './transport';
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
  const { data: app } = useAppDetail(appId);
  const transport = useMemo(() => sessionTransport(appId), [appId]);
  const refreshHistory = useHistoryRefresh(transport);
  const [showHistory, setShowHistory] = useState(false);
  const open = useCallback((id: string) => navigate(withQuery('/', { appId, chatId: id }), { replace: !chatId }), [appId, chatId, navigate]);
  // A chat has an id from the start, so that its first turn is stored.
  const [fresh] = useState(newId);
  const current = chatId || fresh;
  if (!app) return <Loading />;
  const variableNames = appVariables(app);
  // Once the platform has the question, the chat is in the address (a reload reopens it) and in the list.
  const listed = () => (chatId ? undefined : open(current), void refreshHistory());
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
      {app.intro && (
        <p className="muted chat-intro">
          <span>{app.intro}</span>
        </p>
      )}
      <aside className="chat-history" aria-label={t('chat.history')}>
        <Boundary>
          <History
            transport={transport}
            current={current}
            onOpen={(id) => (setShowHistory(false), open(id))}
            onDeleted={(id) => id === current && navigate(withQuery('/', { appId, chatId: newId() }))}
          />
        </Boundary>
      </aside>
      <Boundary>
        <StoredChat key={current} transport={transport} chatId={current} isNew={!chatId} variableNames={variableNames} onSent={listed} onTurn={listed} />
      </Boundary>
    </div>
  );
}
