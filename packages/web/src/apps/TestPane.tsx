// The test chat beside the settings (chat/ChatPanel.tsx). The platform chats
// only with the saved settings, so the pane says so while the form has
// unsaved changes.
import { ChatPanel } from '../chat/ChatPanel';
import { useLang } from '../i18n';

/** `chatKey` changes when the saved variables do: the panel reloads them and starts a new chat. */
export function TestPane({ appId, dirty, chatKey }: { appId: string; dirty: boolean; chatKey: string }) {
  const { t } = useLang();
  return (
    <div className="ap-test-pane">
      <h2>{t('apps.test.title')}</h2>
      {dirty && (
        <p className="notice warn ap-note" role="status">
          <span>{t('apps.test.unsaved')}</span>
        </p>
      )}
      <ChatPanel key={chatKey} appId={appId} compact />
    </div>
  );
}
