// The chat with one of the team's applications, as the signed-in user, on its
// own: what the application's settings page shows as its test pane. Its chat
// is kept for the tab (a reload reopens it; New chat starts another); the chat
// page at /chat uses the same conversation with the chat list and the chatId
// in the URL.
import { useMemo, useState } from 'react';
import type { PublicApp } from '../api';
import { useAppDetail } from '../apps/queries';
import { useLang } from '../i18n';
import { Boundary, Loading } from '../ui';
import { StoredChat } from './History';
import { appVariables, newId } from './messages-model';
import { sessionTransport } from './transport';

export interface ChatPanelProps {
  appId: string;
  /** Narrower: the variables form starts closed, the input is shorter. */
  compact?: boolean;
  /** Called when the user starts a new chat here. */
  onNewChat?: () => void;
}

export function ChatPanel(props: ChatPanelProps) {
  return (
    <Boundary>
      <AppConversation {...props} />
    </Boundary>
  );
}

function AppConversation(props: ChatPanelProps) {
  const { data: app } = useAppDetail(props.appId);
  if (!app) return <Loading />;
  return <TestChat {...props} app={app} />;
}

/**
 * The test chat is kept for the tab, so that a reload reopens it (its turns
 * are stored as they are asked); per application and its variables, so that
 * changed variables start a new one.
 */
function TestChat({ appId, app, compact, onNewChat }: ChatPanelProps & { app: PublicApp }) {
  const { t } = useLang();
  const transport = useMemo(() => sessionTransport(appId), [appId]);
  const variableNames = appVariables(app);
  const storageKey = `kbchat.testChat.${appId}.${variableNames.join(',')}`;
  const [chat, setChat] = useState(() => {
    const kept = sessionStorage.getItem(storageKey);
    return { id: kept ?? newId(), isNew: !kept };
  });
  return (
    <div className="chat-panel-wrap">
      <div className="row chat-panel-bar">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            sessionStorage.removeItem(storageKey);
            setChat({ id: newId(), isNew: true });
            onNewChat?.();
          }}
        >
          <span>{t('chat.newChat')}</span>
        </button>
      </div>
      <Boundary>
        <StoredChat
          key={chat.id}
          transport={transport}
          chatId={chat.id}
          isNew={chat.isNew}
          variableNames={variableNames}
          compact={compact}
          onSent={() => sessionStorage.setItem(storageKey, chat.id)}
        />
      </Boundary>
    </div>
  );
}
