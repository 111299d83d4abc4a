// The public chat page of a share link (/chat/share?shareId=), no sign-in.
// Each visitor is a random outLinkUid kept in this browser per link: their
// chats are theirs alone.
import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo, useState } from 'react';
import { withQuery, type ShareInit } from '../api';
import { setLang, useLang } from '../i18n';
import { Boundary, Loading } from '../ui';
import { History, StoredChat, useHistoryRefresh } from './History';
import { newId } from './messages-model';
import { anonymousApi, shareTransport } from './transport';
import './chat.css';

function visitorId(shareId: string): string {
  const key = `kbchat.outLinkUid.${shareId}`;
  let uid = localStorage.getItem(key);
  if (!uid) localStorage.setItem(key, (uid = `visitor-${newId()}`));
  return uid;
}

export function SharePage() {
  const { t, lang } = useLang();
  const shareId = new URLSearchParams(location.search).get('shareId') ?? '';
  return (
    <div className="share-shell">
      <header className="row">
        <strong>{t('app.title')}</strong>
        <span className="grow" />
        <button type="button" className="link" onClick={() => setLang(lang === 'en' ? 'zh' : 'en')}>
          <span>{t('lang.switch')}</span>
        </button>
      </header>
      <main>
        <Boundary>
          {shareId ? (
            <SharedChat shareId={shareId} />
          ) : (
            <p role="alert" className="error">
              <span>{t('share.missing')}</span>
            </p>
          )}
        </Boundary>
      </main>
    </div>
  );
}

function SharedChat({ shareId }: { shareId: string }) {
  const { t } = useLang();
  const { data } = useQuery({
    queryKey: ['share', shareId],
    queryFn: ({ signal }) => anonymousApi<ShareInit>(withQuery('/api/support/outLink/init', { shareId }), { signal }),
  });
  const transport = useMemo(() => shareTransport(shareId, visitorId(shareId)), [shareId]);
  // The chat in the address (?chatId=), so that a reload reopens it.
  const [chatId, setChatId] = useState(() => new URLSearchParams(location.search).get('chatId') || newId());
  const [stored, setStored] = useState(() => new URLSearchParams(location.search).has('chatId'));
  const refreshHistory = useHistoryRefresh(transport);
  const [showHistory, setShowHistory] = useState(false);
  const show = useCallback((id: string, isStored: boolean) => {
    setChatId(id);
    setStored(isStored);
    const url = new URL(location.href);
    if (isStored) url.searchParams.set('chatId', id);
    else url.searchParams.delete('chatId');
    history.replaceState(null, '', url);
  }, []);
  const open = useCallback(
    (id: string) => {
      show(id, true);
      setShowHistory(false);
    },
    [show],
  );
  const sent = useCallback(() => {
    const url = new URL(location.href);
    url.searchParams.set('chatId', chatId);
    history.replaceState(null, '', url);
    void refreshHistory();
  }, [chatId, refreshHistory]);
  if (!data) return <Loading />;
  return (
    <div className={`chat-page${showHistory ? ' history-open' : ''}`}>
      <div className="chat-head row">
        <h1>{data.app.name}</h1>
        <span className="grow" />
        <button type="button" className="secondary history-toggle" aria-expanded={showHistory} onClick={() => setShowHistory(!showHistory)}>
          <span>{t('chat.history')}</span>
        </button>
        <button type="button" className="secondary" onClick={() => show(newId(), false)}>
          <span>{t('chat.newChat')}</span>
        </button>
      </div>
      {data.app.intro && (
        <p className="muted chat-intro">
          <span>{data.app.intro}</span>
        </p>
      )}
      <aside className="chat-history" aria-label={t('chat.history')}>
        <Boundary>
          <History transport={transport} current={chatId} onOpen={open} onDeleted={(id) => id === chatId && show(newId(), false)} />
        </Boundary>
      </aside>
      <Boundary>
        <StoredChat
          key={chatId}
          transport={transport}
          chatId={chatId}
          isNew={!stored}
          variableNames={data.app.variables ?? []}
          onSent={sent}
          onTurn={() => void refreshHistory()}
        />
      </Boundary>
    </div>
  );
}
