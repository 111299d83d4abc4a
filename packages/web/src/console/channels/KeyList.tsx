// A channel's keys, each by its hint (the gateway never sends a key whole).
// A pool (a key of several lines) shows each key's state: a key the upstream
// refused or found out of quota says why and since when, when the gateway
// tests it again, and can be enabled by hand. One key is shown by its hint only.
import { useLang } from '../../i18n';
import { formatClock, formatTime } from '../../ui';
import type { PublicChannel, PublicChannelKey } from './channels-api';

export function KeyList({ channel: c, busy, onEnable }: { channel: PublicChannel; busy: string | null; onEnable: (index: number) => void }) {
  const { t } = useLang();
  if (c.keys.length === 0) return null;
  if (c.keys.length === 1)
    return (
      <span className="muted ch-small" data-testid="key-hint">
        {t('channels.keyHint', { hint: c.keys[0]!.hint })}
      </span>
    );
  const strategy = c.options.keyStrategy === 'random' ? t('channels.keyStrategy.random') : t('channels.keyStrategy.round-robin');
  return (
    <div className="ch-keys">
      <span className="muted ch-small">{t('channels.keyPool', { n: c.keys.length, strategy })}</span>
      <ul className="ch-key-list">
        {c.keys.map((k) => (
          <KeyLine key={k.index} k={k} channelName={c.name} enabling={busy === `key:${k.index}`} onEnable={() => onEnable(k.index)} />
        ))}
      </ul>
    </div>
  );
}

function KeyLine({ k, channelName, enabling, onEnable }: { k: PublicChannelKey; channelName: string; enabling: boolean; onEnable: () => void }) {
  const { t, lang } = useLang();
  const off = k.status === 'disabled';
  return (
    <li className="ch-key" data-key-index={k.index}>
      <div className="ch-model-head">
        <code>{k.hint}</code>
        <span className={`badge ${off ? 'warn' : 'ok'}`}>{t(off ? 'channels.keyDisabled' : 'channels.keyEnabled')}</span>
      </div>
      {off && (
        <div className="ch-disabled">
          <span className="ch-small ch-error-text" data-testid="key-reason">
            {k.reason}
          </span>
          {k.disabled_at !== null && <span className="ch-small">{t('channels.disabledSince', { time: formatTime(k.disabled_at, lang) })}</span>}
          <span className="ch-small">
            {k.retest_at === null ? t('channels.keyNoRetest') : t('channels.keyRetestAt', { time: formatClock(k.retest_at, lang) })}
          </span>
          <button
            type="button"
            className="secondary ch-enable"
            disabled={enabling}
            aria-label={t('channels.enableKeyNamed', { hint: k.hint, name: channelName })}
            onClick={onEnable}
          >
            <span>{t('channels.enableKey')}</span>
          </button>
        </div>
      )}
    </li>
  );
}
