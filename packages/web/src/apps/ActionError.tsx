// An action's failure next to its control, in the platform's own words.
import { ApiError } from '../api';
import { useLang } from '../i18n';

export function ActionError({ error }: { error: unknown }) {
  const { t } = useLang();
  if (!error) return null;
  const message = error instanceof ApiError && error.status === 0 ? t('apps.error.network') : (error as Error).message || String(error);
  return (
    <p role="alert" className="error ap-error">
      <span>{message}</span>
    </p>
  );
}
