// The public chat page of a share link (/chat/share?shareId=), no sign-in.
// Each visitor is a random outLinkUid kept in this browser per link: their
// chats are theirs alone. A link with a sign-in check (the operator's hook)
// takes the visitor's token from the address (?authToken=, which the embed
// script or the operator's page puts there): the platform asks the hook, and
// the uid it answers is the visitor's id, the same on any device. A refusal
// (no token, the hook's no, its silence, the link's usage spent) is shown in
// the platform's words, in place of the chat.
import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo, useState } from 'react';
import { ApiError, withQuery, type ShareInit } from '../api';
import { setLang, useLang } from '../i18n';
import { Boundary, Loading } from '../ui';
import { History, StoredChat, useHistoryRefresh } from './History';
import { newId } from './messages-model';
import { anonymousApi, shareTransport } from './transport';
import './chat.css';

function visitorId(shareId: string): string {
  const key = `kbchat.outLinkUid.${shareId}`;
  try {
    let uid = localStorage.getItem(key);
    if (!uid) localStorage.setItem(key, (uid = `visitor-${newId()}`));
    return uid;
  } catch {
    // Embedded in a browser that gives a framed page no storage: a visitor for this page load.
    return `visitor-${newId()}`;
  }
}

export function SharePage() {
  const { t, lang } = useLang();
  const params = new URLSearchParams(location.search);
  const shareId = params.get('shareId') ?? '';
  const authToken = params.get('authToken') || undefined;
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
            <SharedChat shareId={shareId} authToken={authToken} />
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

/** The platform's refusals of the visitor (401, 403: no token, the hook's no or silence, an expired or spent link): shown as they are. */
const refused = (err: unknown) => err instanceof ApiError && (err.status === 401 || err.status === 403);

function SharedChat({ shareId, authToken }: { shareId: string; authToken?: string }) {
  const init = useQuery({
    queryKey: ['share', shareId, { authToken }],
    queryFn: ({ signal }) => anonymousApi<ShareInit>(withQuery('/api/support/outLink/init', { shareId, authToken }), { signal }),
    // A refusal is this page's to show; any other failure goes to the boundary (with its Retry where one can help).
    throwOnError: (err) => !refused(err),
  });
  if (init.error && !init.isFetching) return <Refused error={init.error as ApiError} onRetry={() => void init.refetch()} />;
  if (!init.data) return <Loading />;
  return <ShareChat shareId={shareId} authToken={authToken} init={init.data} />;
}

/** The platform's message, plainly; a sign-in check that did not answer in time may answer the next time. */
function Refused({ error, onRetry }: { error: ApiError; onRetry: () => void }) {
  const { t } = useLang();
  return (
    <div className="stack share-refused">
      <div role="alert" className="notice error">
        <strong>
          <span>{t('share.closed')}</span>
        </strong>
        <p>
          <span>{error.message}</span>
        </p>
      </div>
      {error.code === 'share_auth_timeout' && (
        <div>
          <button type="button" onClick={onRetry}>
            <span>{t('error.retry')}</span>
          </button>
        </div>
      )}
    </div>
  );
}

function ShareChat({ shareId, authToken, init: data }: { shareId: string; authToken?: string; init: ShareInit }) {
  const { t } = useLang();
  // The hook's uid where the link has one (the visitor's chats on any device), else this browser's own id.
  const uid = data.uid;
  const transport = useMemo(() => shareTransport(shareId, uid ?? visitorId(shareId), authToken), [shareId, uid, authToken]);
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
