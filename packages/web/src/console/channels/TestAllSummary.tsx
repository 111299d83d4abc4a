// What a test of every channel found: how many models passed and failed, and
// each failure with its channel, model and the upstream's exact error.
import { useLang } from '../../i18n';
import type { TestAllResult } from './channels-api';

export function TestAllSummary({ result, onClose }: { result: TestAllResult; onClose: () => void }) {
  const { t } = useLang();
  const { summary } = result;
  const failed = result.data.filter((r) => !r.ok);
  const seconds = ((summary.finished_at - summary.started_at) / 1000).toFixed(1);
  return (
    <section className={`notice ${failed.length || result.skipped.length ? 'warn' : 'ok'} ch-summary`} aria-label={t('channels.summaryTitle')}>
      <p role="status">
        <span>{t('channels.summary', { tested: summary.tested, channels: summary.channels, ok: summary.ok, failed: summary.failed, seconds })}</span>
      </p>
      {failed.length > 0 && (
        <>
          <strong>{t('channels.summaryFailed')}</strong>
          <ul className="ch-summary-list">
            {failed.map((r) => (
              <li key={`${r.channel_id}:${r.model}`}>
                <span className="ch-summary-where">{t('channels.summaryWhere', { name: r.channel_name, id: r.channel_id, model: r.model })}</span>
                <span className="ch-bad">{r.status ? t('channels.errorWithStatus', { status: r.status, error: r.error ?? '' }) : (r.error ?? '')}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {result.skipped.length > 0 && (
        <>
          <strong>{t('channels.summarySkipped')}</strong>
          <ul className="ch-summary-list">
            {result.skipped.map((s) => (
              <li key={s.channel_id}>
                <span className="ch-summary-where">{t('channels.summarySkippedWhere', { name: s.channel_name, id: s.channel_id })}</span>
                <span className="muted">{s.reason}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      <button type="button" className="secondary" onClick={onClose}>
        <span>{t('channels.close')}</span>
      </button>
    </section>
  );
}
