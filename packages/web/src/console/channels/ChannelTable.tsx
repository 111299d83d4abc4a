// The channels of one page: a row each with where it came from, its keys by
// their hints (a pool's with each key's state), status,
// priority, weight, its models with their last test (latency or the exact
// upstream error) and auto-disable state, and its actions. Every action ends
// by re-reading the list from the gateway (onChanged). On a phone each row
// becomes a card (channels.css), its cells labelled by data-label.
import { useState } from 'react';
import { ActionError, DeleteButton } from '../../actions';
import { useLang } from '../../i18n';
import { formatTime } from '../../ui';
import { channelsApi, envSource, type PublicChannel } from './channels-api';
import { KeyList } from './KeyList';
import { ModelList } from './ModelList';

export function ChannelTable({ channels, onChanged, onEdit }: { channels: PublicChannel[]; onChanged: () => void; onEdit: (c: PublicChannel) => void }) {
  const { t } = useLang();
  return (
    <div className="table-wrap">
      <table className="ch-table">
        <thead>
          <tr>
            <th>{t('channels.col.channel')}</th>
            <th>{t('channels.col.status')}</th>
            <th>{t('channels.col.priority')}</th>
            <th>{t('channels.col.weight')}</th>
            <th>{t('channels.col.models')}</th>
            <th>{t('channels.col.actions')}</th>
          </tr>
        </thead>
        <tbody>
          {channels.map((c) => (
            <ChannelRow key={c.id} channel={c} onChanged={onChanged} onEdit={() => onEdit(c)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ChannelRow({ channel: c, onChanged, onEdit }: { channel: PublicChannel; onChanged: () => void; onEdit: () => void }) {
  const { t, lang } = useLang();
  /** What is running in this row: 'all' (the channel's models), a model's name, or the status change. */
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const env = envSource(c);

  const run = async (what: string, action: () => Promise<unknown>) => {
    setBusy(what);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
      onChanged();
    }
  };
  const lastTested = c.last_tests.reduce((m, x) => Math.max(m, x.tested_at), 0);
  const disabledKeys = c.keys.filter((k) => k.status === 'disabled').length;

  return (
    <tr data-channel-id={c.id} className={c.status === 'enabled' ? undefined : 'ch-off'}>
      <td data-label={t('channels.col.channel')}>
        <div className="ch-name">
          <strong>{c.name}</strong>
          <span className="muted ch-small">{t('channels.idType', { id: c.id, type: c.type })}</span>
          <span className="muted ch-small ch-url">{c.base_url}</span>
          <KeyList channel={c} busy={busy} onEnable={(index) => run(`key:${index}`, () => channelsApi.enableKey(c.id, index))} />
          {env && (
            <span className="ch-env">
              <span className="badge">{env === 'LOCAL' ? t('channels.fromLocal') : t('channels.fromEnv')}</span>
              <span className="muted ch-small">{env === 'LOCAL' ? t('channels.localNote') : t('channels.envNote', { variable: env })}</span>
            </span>
          )}
        </div>
      </td>
      <td data-label={t('channels.col.status')}>
        <div className="ch-cell-stack">
          <span className={`badge ${c.status === 'enabled' ? 'ok' : 'bad'}`}>
            {t(c.status === 'enabled' ? 'channels.status.enabled' : 'channels.status.disabled')}
          </span>
          {c.disabled_models.length > 0 && <span className="badge warn">{t('channels.autoDisabledCount', { n: c.disabled_models.length })}</span>}
          {disabledKeys > 0 && <span className="badge warn">{t('channels.keysDisabledCount', { n: disabledKeys, of: c.keys.length })}</span>}
          {!c.key_set && <span className="muted ch-small">{t('channels.noKey')}</span>}
        </div>
      </td>
      <td data-label={t('channels.col.priority')}>
        <span>{c.priority}</span>
      </td>
      <td data-label={t('channels.col.weight')}>
        <span>{c.weight}</span>
      </td>
      <td className="ch-models-cell" data-label={t('channels.col.models')}>
        {lastTested > 0 && <span className="muted ch-small">{t('channels.lastTested', { time: formatTime(lastTested, lang) })}</span>}
        <ModelList
          channel={c}
          busyModel={busy}
          onTest={(model) => run(model, () => channelsApi.test(c.id, model))}
          onEnable={(model) => run(`enable:${model}`, () => channelsApi.enableModels(c.id, model))}
        />
      </td>
      <td className="ch-actions-cell">
        <div className="ch-actions">
          <button
            type="button"
            disabled={busy !== null}
            aria-label={t('channels.testChannelNamed', { name: c.name })}
            onClick={() => run('all', () => channelsApi.test(c.id))}
          >
            <span>{busy === 'all' ? t('channels.testing') : t('channels.testChannel')}</span>
          </button>
          <button type="button" className="secondary" aria-label={t('channels.editNamed', { name: c.name })} onClick={onEdit}>
            <span>{t('channels.edit')}</span>
          </button>
          <button
            type="button"
            className="secondary"
            disabled={busy !== null}
            aria-label={t(c.status === 'enabled' ? 'channels.disableNamed' : 'channels.enableNamed', { name: c.name })}
            onClick={() => run('status', () => channelsApi.update(c.id, { status: c.status === 'enabled' ? 'disabled' : 'enabled' }))}
          >
            <span>{t(c.status === 'enabled' ? 'channels.disable' : 'channels.enable')}</span>
          </button>
          <DeleteButton name={c.name} onDelete={async () => (await channelsApi.remove(c.id), onChanged())} />
        </div>
        <ActionError error={error} />
      </td>
    </tr>
  );
}
