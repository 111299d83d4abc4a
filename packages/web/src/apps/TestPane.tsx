// The test chat beside the settings. The platform chats only with the saved
// settings, so the pane says so while the form has unsaved changes.
import { useLang } from '../i18n';

export function TestPane({ appId, dirty }: { appId: string; dirty: boolean }) {
  const { t } = useLang();
  return (
    <div className="ap-test-pane stack">
      <h2>{t('apps.test.title')}</h2>
      {dirty && (
        <p className="notice warn ap-note" role="status">
          <span>{t('apps.test.unsaved')}</span>
        </p>
      )}
      {/* The chat component (chat/ChatPanel.tsx) is not built yet. */}
      <p className="muted" data-app-id={appId}>
        <span>{t('apps.test.placeholder')}</span>
      </p>
    </div>
  );
}
