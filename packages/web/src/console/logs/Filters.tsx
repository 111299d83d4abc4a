// The log list's filters: picked by name (users, tokens and channels are
// listed once, when the page opens), kept in the URL by id. Nothing is sent
// until Apply (or a quick time range), so a half-made filter never loads.
import { useEffect, useState, type FormEvent } from 'react';
import type { PublicChannel } from '@kbchat/gateway';
import { withQuery } from '../../api';
import { useLang, type MessageKey } from '../../i18n';
import { gatewayApi, type GatewayToken, type GatewayUser } from '../gateway-api';
import { isFiltered, isoOfLocalInput, localInputOf, STATUSES, type LogFilters, type StatusFilter } from './query';

export interface Pickers {
  users: GatewayUser[];
  tokens: GatewayToken[];
  channels: PublicChannel[];
  error?: Error;
}

/** How many users and tokens a picker lists (one page of each list API); an id beyond them still filters, shown as #id. */
const PICKER_LIMIT = 500;

/** The users, tokens and channels to pick from: three calls when the page opens, none per row. */
export function usePickers(): Pickers {
  const [pickers, setPickers] = useState<Pickers>({ users: [], tokens: [], channels: [] });
  useEffect(() => {
    Promise.all([
      gatewayApi<{ data: GatewayUser[] }>(withQuery('/api/users', { limit: PICKER_LIMIT })),
      gatewayApi<{ data: GatewayToken[] }>(withQuery('/api/tokens', { limit: PICKER_LIMIT })),
      gatewayApi<{ data: PublicChannel[] }>('/api/channels'),
    ]).then(
      ([users, tokens, channels]) => setPickers({ users: users.data, tokens: tokens.data, channels: channels.data }),
      (error: Error) => setPickers((p) => ({ ...p, error })),
    );
  }, []);
  return pickers;
}

const RANGES = [
  { label: 'requestLogs.lastHour', ms: 3_600_000 },
  { label: 'requestLogs.lastDay', ms: 86_400_000 },
  { label: 'requestLogs.lastWeek', ms: 7 * 86_400_000 },
] as const;

/** The options of a picker, with the chosen id added when the list lacks it (beyond its first page, or deleted). */
function options(items: { id: number; label: string }[], chosen: string | undefined) {
  if (chosen && !items.some((i) => String(i.id) === chosen)) return [...items, { id: Number(chosen), label: `#${chosen}` }];
  return items;
}

export function Filters({ applied, pickers, onApply }: { applied: LogFilters; pickers: Pickers; onApply: (f: LogFilters) => void }) {
  const { t } = useLang();
  // Times as the inputs hold them (local, maybe half typed) until applied.
  const draftOf = (f: LogFilters) => ({ ...f, from: localInputOf(f.from), to: localInputOf(f.to) });
  const [draft, setDraft] = useState<LogFilters>(() => draftOf(applied));
  // A new URL (back, a link, Clear) is what the form shows.
  const appliedKey = JSON.stringify(applied);
  useEffect(() => setDraft(draftOf(applied)), [appliedKey]); // eslint-disable-line react-hooks/exhaustive-deps
  const set = (change: Partial<LogFilters>) => setDraft((d) => ({ ...d, ...change }));
  // A time left as shown keeps its exact value (the input shows minutes; a quick range has milliseconds).
  const timeOfDraft = (shown: string | undefined, exact: string | undefined) => (shown === localInputOf(exact) ? exact : isoOfLocalInput(shown ?? ''));
  const filtersOfDraft = (): LogFilters => ({ ...draft, model: draft.model?.trim() || undefined, from: timeOfDraft(draft.from, applied.from), to: timeOfDraft(draft.to, applied.to) });

  const usernames = new Map(pickers.users.map((u) => [u.id, u.username]));
  const userOptions = options(pickers.users.map((u) => ({ id: u.id, label: u.username })), draft.user_id);
  const tokenOptions = options(
    pickers.tokens
      .filter((k) => !draft.user_id || String(k.user_id) === draft.user_id)
      .map((k) => ({ id: k.id, label: usernames.has(k.user_id) ? `${k.name} · ${usernames.get(k.user_id)}` : k.name })),
    draft.token_id,
  );
  const channelOptions = options(pickers.channels.map((c) => ({ id: c.id, label: c.name })), draft.channel_id);
  const models = [...new Set(pickers.channels.flatMap((c) => c.models))].sort();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply(filtersOfDraft());
  };
  const select = (label: MessageKey, any: MessageKey, value: string | undefined, items: { id: number; label: string }[], onChange: (v: string | undefined) => void) => (
    <label>
      <span>{t(label)}</span>
      <select value={value ?? ''} onChange={(e) => onChange(e.target.value || undefined)}>
        <option value="">{t(any)}</option>
        {items.map((i) => (
          <option key={i.id} value={String(i.id)}>
            {i.label}
          </option>
        ))}
      </select>
    </label>
  );

  return (
    <form className="card logs-filters" aria-label={t('requestLogs.filters')} onSubmit={submit}>
      <div className="logs-filter-grid">
        <label>
          <span>{t('requestLogs.from')}</span>
          <input type="datetime-local" value={draft.from ?? ''} onChange={(e) => set({ from: e.target.value })} />
        </label>
        <label>
          <span>{t('requestLogs.to')}</span>
          <input type="datetime-local" value={draft.to ?? ''} onChange={(e) => set({ to: e.target.value })} />
        </label>
        {select('requestLogs.user', 'requestLogs.anyUser', draft.user_id, userOptions, (user_id) => set({ user_id, token_id: undefined }))}
        {select('requestLogs.token', 'requestLogs.anyToken', draft.token_id, tokenOptions, (token_id) => set({ token_id }))}
        {select('requestLogs.channel', 'requestLogs.anyChannel', draft.channel_id, channelOptions, (channel_id) => set({ channel_id }))}
        <label>
          <span>{t('requestLogs.model')}</span>
          <input list="logs-models" value={draft.model ?? ''} onChange={(e) => set({ model: e.target.value })} />
          <datalist id="logs-models">
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </label>
        <label>
          <span>{t('requestLogs.status')}</span>
          <select value={draft.status ?? ''} onChange={(e) => set({ status: (e.target.value || undefined) as StatusFilter | undefined })}>
            <option value="">{t('requestLogs.anyStatus')}</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {t(`requestLogs.status.${s}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div className="row">
        <button type="submit">
          <span>{t('requestLogs.apply')}</span>
        </button>
        {RANGES.map((r) => (
          <button key={r.label} type="button" className="secondary" onClick={() => onApply({ ...filtersOfDraft(), from: new Date(Date.now() - r.ms).toISOString(), to: undefined })}>
            <span>{t(r.label)}</span>
          </button>
        ))}
        {isFiltered(applied) && (
          <button type="button" className="link" onClick={() => onApply({})}>
            <span>{t('requestLogs.clear')}</span>
          </button>
        )}
      </div>
      {pickers.error && (
        <p role="alert" className="error">
          <span>{t('requestLogs.pickersFailed', { message: pickers.error.message })}</span>
        </p>
      )}
    </form>
  );
}
