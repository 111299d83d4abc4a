// Sets one model's fallbacks: the models that answer, in order, when every
// channel of it fails with an error worth retrying. An ordered list (added
// from the models the page knows or typed, removed, moved up and down), saved
// whole (PUT) or removed (DELETE); `onDone` gets the list the gateway then
// holds ([] once removed), or null when cancelled.
import { useState, type FormEvent } from 'react';
import type { FallbacksBody, ModelFallbacks } from '@kbchat/contracts';
import { ApiError } from '../../api';
import { ActionError } from '../../actions';
import { useLang } from '../../i18n';
import { gatewayApi } from '../gateway-api';
import { fallbacksPath } from './convert';

/** As the gateway's own limit (channels/fallbacks.ts MAX_FALLBACKS). */
const MAX = 5;

export function FallbacksEditor({
  model,
  start,
  known,
  onDone,
}: {
  model: string;
  start: string[];
  known: string[];
  onDone: (fresh: string[] | null) => void;
}) {
  const { t } = useLang();
  const [list, setList] = useState<string[]>(start);
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const choices = known.filter((m) => m !== model && !list.includes(m));

  const add = (raw: string): boolean => {
    const name = raw.trim();
    if (!name) return false;
    const problem =
      name === model ? 'prices.fallbacks.self' : list.includes(name) ? 'prices.fallbacks.twice' : list.length >= MAX ? 'prices.fallbacks.full' : null;
    if (problem) {
      setError(new Error(t(problem, { model: name, n: MAX })));
      return false;
    }
    setError(null);
    setList([...list, name]);
    return true;
  };
  const move = (i: number, by: -1 | 1) => {
    const next = [...list];
    [next[i], next[i + by]] = [next[i + by]!, next[i]!];
    setList(next);
  };
  const run = async (call: () => Promise<string[]>) => {
    setBusy(true);
    setError(null);
    try {
      onDone(await call());
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (list.length === 0) return setError(new Error(t('prices.fallbacks.needOne')));
    void run(async () => {
      const body: FallbacksBody = { fallbacks: list };
      return (await gatewayApi<ModelFallbacks>(fallbacksPath(model), { method: 'PUT', json: body })).fallbacks;
    });
  };
  const removeAll = () =>
    run(async () => {
      try {
        await gatewayApi(fallbacksPath(model), { method: 'DELETE' });
      } catch (err) {
        // Already gone (another console, or another process): what was wanted.
        if (!(err instanceof ApiError && err.status === 404)) throw err;
      }
      return [];
    });

  const title = t('prices.fallbacks.title', { model });
  return (
    <form className="card stack fallbacks-editor" onSubmit={save} aria-label={title}>
      <strong>{title}</strong>
      <p className="muted">
        <span>{t('prices.fallbacks.explain', { model, n: MAX })}</span>
      </p>
      {list.length === 0 ? (
        <p className="muted" data-testid="fallbacks-empty">
          <span>{t('prices.fallbacks.empty')}</span>
        </p>
      ) : (
        <ol className="fallbacks-list" aria-label={t('prices.fallbacks.order')}>
          {list.map((m, i) => (
            <li key={m}>
              <div className="fallbacks-item">
                <code data-testid="fallback">{m}</code>
                <span className="row fallbacks-moves">
                  <button
                    type="button"
                    className="secondary"
                    disabled={i === 0}
                    aria-label={t('prices.fallbacks.up', { model: m })}
                    onClick={() => move(i, -1)}
                  >
                    <span aria-hidden="true">↑</span>
                  </button>
                  <button
                    type="button"
                    className="secondary"
                    disabled={i === list.length - 1}
                    aria-label={t('prices.fallbacks.down', { model: m })}
                    onClick={() => move(i, 1)}
                  >
                    <span aria-hidden="true">↓</span>
                  </button>
                  <button
                    type="button"
                    className="secondary"
                    aria-label={t('prices.fallbacks.drop', { model: m })}
                    onClick={() => setList(list.filter((x) => x !== m))}
                  >
                    <span aria-hidden="true">✕</span>
                  </button>
                </span>
              </div>
            </li>
          ))}
        </ol>
      )}
      <div className="fallbacks-add">
        <label>
          <span>{t('prices.fallbacks.pick')}</span>
          <select value="" disabled={list.length >= MAX || choices.length === 0} onChange={(e) => add(e.target.value)}>
            <option value="">{t(choices.length === 0 ? 'prices.fallbacks.noChoice' : 'prices.fallbacks.choose')}</option>
            {choices.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <div className="fallbacks-typed">
          <label>
            <span>{t('prices.fallbacks.typed')}</span>
            <input
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              onKeyDown={(e) => {
                // Enter adds the name typed; it does not save the list.
                if (e.key !== 'Enter') return;
                e.preventDefault();
                if (add(typed)) setTyped('');
              }}
              autoComplete="off"
              spellCheck={false}
            />
          </label>
          <button type="button" className="secondary" disabled={list.length >= MAX} onClick={() => add(typed) && setTyped('')}>
            <span>{t('prices.fallbacks.add')}</span>
          </button>
        </div>
      </div>
      <ActionError error={error} />
      <div className="row">
        <button type="submit" disabled={busy}>
          <span>{busy ? t('prices.saving') : t('prices.save')}</span>
        </button>
        {start.length > 0 && (
          <button type="button" className="danger" disabled={busy} onClick={() => void removeAll()}>
            <span>{t('prices.fallbacks.removeAll')}</span>
          </button>
        )}
        <button type="button" className="secondary" onClick={() => onDone(null)}>
          <span>{t('prices.cancel')}</span>
        </button>
      </div>
    </form>
  );
}
