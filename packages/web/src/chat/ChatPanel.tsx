// The chat with one of the team's applications, as the signed-in user, on its
// own: what the application's settings page shows as its test pane. It keeps
// its chat in its own state (New chat starts another); the chat page at /chat
// uses the same conversation with the chat list and the chatId in the URL.
import { useMemo, useState } from 'react';
import { api, withQuery, type PublicApp } from '../api';
import { useLang } from '../i18n';
import { Boundary, Loading, useLoad } from '../ui';
import { Conversation } from './Conversation';
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

function AppConversation({ appId, compact, onNewChat }: ChatPanelProps) {
  const { t } = useLang();
  const { data: app } = useLoad(() => api<PublicApp>(withQuery('/api/core/app/detail', { appId })), [appId]);
  const transport = useMemo(() => sessionTransport(appId), [appId]);
  const [chatId, setChatId] = useState(newId);
  if (!app) return <Loading />;
  return (
    <div className="chat-panel-wrap">
      <div className="row chat-panel-bar">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setChatId(newId());
            onNewChat?.();
          }}
        >
          <span>{t('chat.newChat')}</span>
        </button>
      </div>
      <Boundary>
        <Conversation key={chatId} transport={transport} chatId={chatId} variableNames={appVariables(app)} compact={compact} />
      </Boundary>
    </div>
  );
}
