// The search test's "Save as check": the question and settings just searched,
// and the results the person ticks as ones it should find. Each ticked result
// is saved as a text the chunk contains (editable), which survives a re-chunk
// where the chunk's id would not.
import type { CreateCheckBody } from '@kbchat/contracts';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, type CheckSettings } from '../api';
import { ActionError } from '../actions';
import { useLang } from '../i18n';
import type { SearchAnswer } from './SearchResults';

type Item = SearchAnswer['list'][number];
const SNIPPET_CHARS = 160;

/** A distinctive piece of a chunk: its first line that is not a heading, cut at a word near SNIPPET_CHARS. */
export function snippetOf(item: Pick<Item, 'q' | 'a'>): string {
  const lines = `${item.q}\n${item.a}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.find((l) => !l.startsWith('#') && l.length >= 20) ?? lines[0] ?? '';
  if (line.length <= SNIPPET_CHARS) return line;
  const cut = line.slice(0, SNIPPET_CHARS);
  const space = cut.lastIndexOf(' ');
  return space > SNIPPET_CHARS / 2 ? cut.slice(0, space) : cut;
}

export function SaveCheck({
  datasetId,
  question,
  settings,
  results,
}: {
  datasetId: string;
  question: string;
  settings: Partial<CheckSettings>;
  results: Item[];
}) {
  const { t } = useLang();
  const [open, setOpen] = useState(false);
  const [ticked, setTicked] = useState<Map<string, string>>(new Map());
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>(null);

  function tick(item: Item, on: boolean) {
    const next = new Map(ticked);
    if (on) next.set(item.id, snippetOf(item));
    else next.delete(item.id);
    setTicked(next);
  }

  async function save() {
    setError(null);
    if (ticked.size === 0) return setError(new Error(t('checks.save.none')));
    setBusy(true);
    try {
      const expected = results.filter((r) => ticked.has(r.id)).map((r) => ({ text: ticked.get(r.id)!, label: r.sourceName }));
      await api<string>('/api/core/dataset/check/create', { json: { datasetId, question, expected, settings } satisfies CreateCheckBody });
      setSaved(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (saved)
    return (
      <p className="row" role="status">
        <span className="badge ok">{t('checks.save.done')}</span>
        <Link href="/checks">{t('checks.save.see')}</Link>
      </p>
    );
  if (!open)
    return (
      <div className="row">
        <button type="button" className="secondary" onClick={() => setOpen(true)} disabled={results.length === 0}>
          <span>{t('checks.save.open')}</span>
        </button>
      </div>
    );
  return (
    <section className="card stack" aria-labelledby="ck-save-title">
      <h3 id="ck-save-title">{t('checks.save.title')}</h3>
      <q className="ck-quote">{question}</q>
      <p className="muted ds-small">
        <span>{t('checks.save.tick')}</span>
      </p>
      <ul className="ck-save-list">
        {results.map((r, i) => (
          <li key={r.id} className="stack">
            <label className="ds-inline">
              <input
                type="checkbox"
                checked={ticked.has(r.id)}
                onChange={(e) => tick(r, e.target.checked)}
                aria-label={t('checks.save.result', { n: i + 1, source: r.sourceName })}
              />
              <span className="ck-save-preview">
                <span className="muted">{`#${i + 1} · ${r.sourceName}`}</span>
                <span>{snippetOf(r)}</span>
              </span>
            </label>
            {ticked.has(r.id) && (
              <input
                type="text"
                value={ticked.get(r.id)}
                aria-label={t('checks.save.snippetFor', { n: i + 1 })}
                maxLength={2000}
                onChange={(e) => setTicked(new Map(ticked).set(r.id, e.target.value))}
              />
            )}
          </li>
        ))}
      </ul>
      <div className="row">
        <button type="button" onClick={save} disabled={busy}>
          <span>{busy ? t('checks.saving') : t('checks.saveCheck')}</span>
        </button>
        <button type="button" className="secondary" onClick={() => setOpen(false)} disabled={busy}>
          <span>{t('common.cancel')}</span>
        </button>
      </div>
      <ActionError error={error} />
    </section>
  );
}
