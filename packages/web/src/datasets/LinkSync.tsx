// A link collection's page read again: "Sync now" (its answer in words), and
// its scheduled sync (off, daily, weekly), saved as it is chosen.
import { SYNC_SCHEDULES, type UpdateCollectionBody } from '@kbchat/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, type PublicCollection } from '../api';
import { ActionError } from '../actions';
import { useLang } from '../i18n';
import { formatTime } from '../ui';
import { useDatasetTraining } from './training';

export function LinkSync({ collection }: { collection: PublicCollection }) {
  const { t, lang } = useLang();
  const client = useQueryClient();
  const training = useDatasetTraining();
  const reload = () => client.invalidateQueries({ queryKey: ['collections', collection._id] });
  const sync = useMutation({
    mutationFn: () => api<'sameRaw' | 'success'>('/api/core/dataset/collection/sync', { json: { collectionId: collection._id } }),
    onSuccess: () => {
      training.changed();
      void reload();
    },
  });
  const schedule = useMutation({
    mutationFn: (json: UpdateCollectionBody) => api('/api/core/dataset/collection/update', { method: 'PUT', json }),
    onSuccess: reload,
  });
  const current = schedule.isPending ? schedule.variables?.syncSchedule : collection.syncSchedule;
  return (
    <div className="row ds-link-sync">
      <button type="button" className="secondary" disabled={sync.isPending} onClick={() => sync.mutate()}>
        <span>{sync.isPending ? t('datasets.sync.running') : t('datasets.sync.now')}</span>
      </button>
      <label className="row">
        <span>{t('datasets.sync.schedule')}</span>
        <select
          value={current ?? 'off'}
          disabled={schedule.isPending}
          onChange={(e) => schedule.mutate({ id: collection._id, syncSchedule: e.target.value as (typeof SYNC_SCHEDULES)[number] })}
        >
          {SYNC_SCHEDULES.map((s) => (
            <option key={s} value={s}>
              {t(`datasets.sync.${s}`)}
            </option>
          ))}
        </select>
      </label>
      <span className="muted" role="status">
        {sync.data === 'sameRaw'
          ? t('datasets.sync.same')
          : sync.data === 'success'
            ? t('datasets.sync.changed')
            : collection.syncedAt
              ? t('datasets.sync.last', { time: formatTime(collection.syncedAt, lang) })
              : null}
      </span>
      <ActionError error={sync.error ?? schedule.error} />
    </div>
  );
}
