// One chunk: its text (q), answer (a) and index texts, edited and saved.
// After a save the chunk is read again, so "Saved" shows what the platform
// now holds, not what was typed.
import type { UpdateDataBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, withQuery, type PublicData } from '../api';
import { useLang } from '../i18n';
import { Loading } from '../ui';
import { ActionError } from '../actions';
import { TextField } from './Field';

interface Draft {
  q: string;
  a: string;
  /** The index texts besides the default one (the platform makes that from q and a). */
  extra: string[];
}

const draftOf = (d: PublicData): Draft => ({ q: d.q, a: d.a, extra: (d.indexes ?? []).filter((i) => !i.defaultIndex).map((i) => i.text) });

export function ChunkEditor({ dataId, onSaved }: { dataId: string; onSaved: () => void }) {
  const { t } = useLang();
  const client = useQueryClient();
  const key = ['chunks', dataId];
  // Read fresh each time it opens (gcTime 0): the form starts from what the platform holds, never a kept copy.
  const { data } = useQuery({
    queryKey: key,
    queryFn: ({ signal }) => api<PublicData>(withQuery('/api/core/dataset/data/detail', { id: dataId }), { signal }),
    gcTime: 0,
  });
  const reload = () => client.invalidateQueries({ queryKey: key });
  const [draft, setDraft] = useState<Draft | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  // Every read (the first, and the one after a save) resets the form to what the platform holds.
  useEffect(() => {
    if (data) setDraft(draftOf(data));
  }, [data]);

  if (!data || !draft) return <Loading />;
  const set = (patch: Partial<Draft>) => {
    setSaved(false);
    setDraft({ ...draft, ...patch });
  };
  const defaultIndex = data.indexes?.find((i) => i.defaultIndex);

  async function save(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('/api/core/dataset/data/update', {
        method: 'PUT',
        json: { dataId, q: draft!.q, a: draft!.a, indexes: draft!.extra.filter((x) => x.trim()).map((text) => ({ text })) } satisfies UpdateDataBody,
      });
      await reload();
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="stack" onSubmit={save}>
      <TextField label={t('datasets.chunk.q')} className="ds-tall" value={draft.q} onChange={(e) => set({ q: e.target.value })} required />
      <TextField label={t('datasets.chunk.a')} value={draft.a} onChange={(e) => set({ a: e.target.value })} />
      <fieldset className="stack ds-indexes">
        <legend>{t('datasets.chunk.indexes')}</legend>
        {defaultIndex && (
          <div className="stack">
            <span className="muted ds-small">{t('datasets.chunk.defaultIndex')}</span>
            <p className="ds-text ds-clamp ds-quote">
              <span>{defaultIndex.text}</span>
            </p>
          </div>
        )}
        {draft.extra.map((text, i) => (
          <div key={i} className="ds-index-row">
            <TextField
              label={t('datasets.chunk.indexN', { n: i + 1 })}
              value={text}
              onChange={(e) => set({ extra: draft.extra.map((x, k) => (k === i ? e.target.value : x)) })}
            />
            <button
              type="button"
              className="secondary"
              aria-label={t('datasets.chunk.removeIndex', { n: i + 1 })}
              onClick={() => set({ extra: draft.extra.filter((_, k) => k !== i) })}
            >
              <span>{t('datasets.chunk.remove')}</span>
            </button>
          </div>
        ))}
        {draft.extra.length < 19 && (
          <div className="row">
            <button type="button" className="secondary" onClick={() => set({ extra: [...draft.extra, ''] })}>
              <span>{t('datasets.chunk.addIndex')}</span>
            </button>
          </div>
        )}
      </fieldset>
      <div className="row">
        <button type="submit" disabled={busy || !draft.q.trim()}>
          <span>{busy ? t('datasets.chunk.saving') : t('common.save')}</span>
        </button>
        {saved && (
          <span role="status" className="badge ok">
            {t('common.saved')}
          </span>
        )}
      </div>
      <p className="muted ds-small">
        <span>{t('datasets.chunk.reindexNote')}</span>
      </p>
      <ActionError error={error} />
    </form>
  );
}
