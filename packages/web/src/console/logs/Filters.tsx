// The log list's filters: picked by name, kept in the URL by id. Users and
// tokens are searched by name on the gateway (?q=), so a picker reaches every
// one, not only a first page; channels are few and listed once. Nothing is
// sent until Apply (or a quick time range), so a half-made filter never loads.
import { useEffect, useState, type FormEvent } from 'react';
import type { PublicChannel } from '@kbchat/contracts';
import { withQuery } from '../../api';
import { useLang, type MessageKey } from '../../i18n';
import { type GatewayToken, type GatewayUser } from '../gateway-api';
import { SEARCH_DELAY_MS, useSearched } from '../searched';
import { isFiltered, isoOfLocalInput, localInputOf, STATUSES, type LogFilters, type StatusFilter } from './query';

/** How many users or tokens a picker lists for one search; a name typed in "Find" narrows it. */
const PICKER_LIMIT = 100;
const RANGES = [
  { label: 'requestLogs.lastHour', ms: 3_600_000 },
  { label: 'requestLogs.lastDay', ms: 86_400_000 },
  { label: 'requestLogs.lastWeek', ms: 7 * 86_400_000 },
] as const;

/**
 * The options of a picker, with the chosen id added when the list lacks it
 * (another search shown, or deleted): by the name it had in an earlier list
 * (`seen`, which this adds to), else as #id.
 */
function options(items: { id: number; label: string }[], chosen: string | undefined, seen: Map<string, string>) {
  for (const i of items) seen.set(String(i.id), i.label);
  if (chosen && !items.some((i) => String(i.id) === chosen)) return [...items, { id: Number(chosen), label: seen.get(chosen) ?? `#${chosen}` }];
  return items;
}

export function Filters({ applied, onApply }: { applied: LogFilters; onApply: (f: LogFilters) => void }) {
  const { t } = useLang();
  const [userSearch, setUserSearch] = useState('');
  const [tokenSearch, setTokenSearch] = useState('');
  // Names of the users and tokens listed so far, for a chosen one another search leaves out.
  const [seenUsers] = useState(() => new Map<string, string>());
  const [seenTokens] = useState(() => new Map<string, string>());
  // Times as the inputs hold them (local, maybe half typed) until applied.
  const draftOf = (f: LogFilters) => ({ ...f, from: localInputOf(f.from), to: localInputOf(f.to) });
  const [draft, setDraft] = useState<LogFilters>(() => draftOf(applied));
  // A new URL (back, a link, Clear) is what the form shows.
  const appliedKey = JSON.stringify(applied);
  useEffect(() => setDraft(draftOf(applied)), [appliedKey]); // eslint-disable-line react-hooks/exhaustive-deps
  const set = (change: Partial<LogFilters>) => setDraft((d) => ({ ...d, ...change }));
  // A time left as shown keeps its exact value (the input shows minutes; a quick range has milliseconds).
  const timeOfDraft = (shown: string | undefined, exact: string | undefined) => (shown === localInputOf(exact) ? exact : isoOfLocalInput(shown ?? ''));
  const filtersOfDraft = (): LogFilters => ({
    ...draft,
    model: draft.model?.trim() || undefined,
    from: timeOfDraft(draft.from, applied.from),
    to: timeOfDraft(draft.to, applied.to),
  });

  const users = useSearched<GatewayUser>(withQuery('/api/users', { q: userSearch.trim() || undefined, limit: PICKER_LIMIT }), userSearch ? SEARCH_DELAY_MS : 0);
  // A chosen user's tokens are that user's (all of them, searched on the gateway too).
  const tokens = useSearched<GatewayToken>(
    withQuery('/api/tokens', { q: tokenSearch.trim() || undefined, user_id: draft.user_id, limit: PICKER_LIMIT }),
    tokenSearch ? SEARCH_DELAY_MS : 0,
  );
  const channels = useSearched<PublicChannel>('/api/channels', 0);
  const pickersError = users.error ?? tokens.error ?? channels.error;

  const usernames = new Map([...seenUsers].map(([id, name]) => [Number(id), name]));
  for (const u of users.items) usernames.set(u.id, u.username);
  const userOptions = options(
    users.items.map((u) => ({ id: u.id, label: u.username })),
    draft.user_id,
    seenUsers,
  );
  const tokenOptions = options(
    tokens.items.map((k) => ({ id: k.id, label: usernames.has(k.user_id) ? `${k.name} · ${usernames.get(k.user_id)}` : k.name })),
    draft.token_id,
    seenTokens,
  );
  const channelOptions = options(
    channels.items.map((c) => ({ id: c.id, label: c.name })),
    draft.channel_id,
    new Map(),
  );
  const models = [...new Set(channels.items.flatMap((c) => c.models))].sort();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply(filtersOfDraft());
  };
  const select = (
    label: MessageKey,
    any: MessageKey,
    value: string | undefined,
    items: { id: number; label: string }[],
    onChange: (v: string | undefined) => void,
  ) => (
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
        <div className="logs-picker">
          {select('requestLogs.user', 'requestLogs.anyUser', draft.user_id, userOptions, (user_id) => set({ user_id, token_id: undefined }))}
          <input
            type="search"
            aria-label={t('requestLogs.findUser')}
            placeholder={t('requestLogs.findUser')}
            value={userSearch}
            onChange={(e) => setUserSearch(e.target.value)}
          />
        </div>
        <div className="logs-picker">
          {select('requestLogs.token', 'requestLogs.anyToken', draft.token_id, tokenOptions, (token_id) => set({ token_id }))}
          <input
            type="search"
            aria-label={t('requestLogs.findToken')}
            placeholder={t('requestLogs.findToken')}
            value={tokenSearch}
            onChange={(e) => setTokenSearch(e.target.value)}
          />
        </div>
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
          <button
            key={r.label}
            type="button"
            className="secondary"
            onClick={() => onApply({ ...filtersOfDraft(), from: new Date(Date.now() - r.ms).toISOString(), to: undefined })}
          >
            <span>{t(r.label)}</span>
          </button>
        ))}
        {isFiltered(applied) && (
          <button type="button" className="link" onClick={() => onApply({})}>
            <span>{t('requestLogs.clear')}</span>
          </button>
        )}
      </div>
      {pickersError && (
        <p role="alert" className="error">
          <span>{t('requestLogs.pickersFailed', { message: pickersError.message })}</span>
        </p>
      )}
    </form>
  );
}
