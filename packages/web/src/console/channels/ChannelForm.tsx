// A channel's form: create, or edit only what changed. The key is write-only:
// the gateway shows only its hints; left empty, an edit keeps it. Several keys,
// one a line, make a pool, taken in turn or at random (keyStrategy). After saving, the channel is read back from the gateway and that is what
// the page reports. A channel from <PROVIDER>_API_KEY says what the next start
// will overwrite. The groups it serves are ticked from the gateway's groups
// (none ticked: every group).
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ActionError, FormButtons } from '../../actions';
import { useLang, type Translate } from '../../i18n';
import { useGroupNames } from '../groups/group-names';
import { channelsApi, envSource, type ChannelInput, type ChannelProviders, type PublicChannel } from './channels-api';

interface Fields {
  name: string;
  type: string;
  baseUrl: string;
  key: string;
  models: string;
  mapping: string;
  priority: string;
  weight: string;
  apiVersion: string;
  streamUsage: boolean;
  keyStrategy: 'round-robin' | 'random';
  groups: string[];
}

function initialFields(c: PublicChannel | undefined, providers: ChannelProviders): Fields {
  const type = c?.type ?? 'openai';
  const streamDefault = providers.types.find((p) => p.type === type)?.stream_usage_default ?? true;
  return {
    name: c?.name ?? '',
    type,
    baseUrl: c?.base_url ?? '',
    key: '',
    models: c?.models.join('\n') ?? '',
    mapping: c && Object.keys(c.model_mapping).length ? JSON.stringify(c.model_mapping, null, 2) : '',
    priority: String(c?.priority ?? 0),
    weight: String(c?.weight ?? 1),
    apiVersion: c?.options.apiVersion ?? '',
    streamUsage: c?.options.streamUsage ?? streamDefault,
    keyStrategy: c?.options.keyStrategy ?? 'round-robin',
    groups: c?.groups ?? [],
  };
}

/** The fields as the API takes them, or the first problem in the reader's words. */
function toInput(f: Fields, c: PublicChannel | undefined, providers: ChannelProviders, t: Translate): ChannelInput {
  const models = f.models
    .split(/[\n,]/)
    .map((m) => m.trim())
    .filter(Boolean);
  if (models.length === 0) throw new Error(t('channels.form.needModels'));
  let mapping: Record<string, string> = {};
  if (f.mapping.trim()) {
    try {
      mapping = JSON.parse(f.mapping);
    } catch {
      throw new Error(t('channels.form.badMapping'));
    }
    if (!mapping || typeof mapping !== 'object' || Array.isArray(mapping) || Object.values(mapping).some((v) => typeof v !== 'string'))
      throw new Error(t('channels.form.badMapping'));
  }
  const int = (s: string, what: string, min: number) => {
    const n = Number(s);
    if (s.trim() === '' || !Number.isInteger(n) || n < min) throw new Error(t('channels.form.badNumber', { field: what, min }));
    return n;
  };
  const priority = int(f.priority, t('channels.form.priority'), -1_000_000);
  const weight = int(f.weight, t('channels.form.weight'), 0);
  // The options the form does not show (model kinds, local model facts) are kept as they are.
  const options = { ...(c?.options ?? {}) };
  const streamDefault = providers.types.find((p) => p.type === f.type)?.stream_usage_default ?? true;
  if (f.streamUsage === streamDefault && c?.options.streamUsage === undefined) delete options.streamUsage;
  else options.streamUsage = f.streamUsage;
  if (f.type === 'azure' && f.apiVersion.trim()) options.apiVersion = f.apiVersion.trim();
  else delete options.apiVersion;
  // In turn is the gateway's default: said only when chosen against an earlier setting.
  if (f.keyStrategy === 'round-robin' && c?.options.keyStrategy === undefined) delete options.keyStrategy;
  else options.keyStrategy = f.keyStrategy;
  const input: ChannelInput = {
    name: f.name.trim(),
    type: f.type,
    base_url: f.baseUrl.trim(),
    models,
    model_mapping: mapping,
    options,
    priority,
    weight,
    groups: f.groups,
  };
  if (f.key) input.key = f.key;
  if (!c) {
    if (!input.name) delete input.name;
    if (!input.base_url) delete input.base_url;
    if (!input.groups?.length) delete input.groups;
    return input;
  }
  if (!input.name) throw new Error(t('channels.form.needName'));
  // An edit sends only what changed: another admin's edit of another field stands.
  const was: Record<string, unknown> = {
    name: c.name,
    type: c.type,
    base_url: c.base_url,
    models: c.models,
    model_mapping: c.model_mapping,
    options: c.options,
    priority: c.priority,
    weight: c.weight,
    groups: c.groups,
  };
  const changed: ChannelInput = {};
  for (const [k, v] of Object.entries(input)) {
    if (k === 'key' || JSON.stringify(v) !== JSON.stringify(was[k])) (changed as Record<string, unknown>)[k] = v;
  }
  return changed;
}

export function ChannelForm({
  channel: c,
  providers,
  onDone,
}: {
  channel?: PublicChannel;
  providers: ChannelProviders;
  onDone: (fresh: PublicChannel | null) => void;
}) {
  const { t } = useLang();
  const [f, setF] = useState<Fields>(() => initialFields(c, providers));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const set = (patch: Partial<Fields>) => setF((prev) => ({ ...prev, ...patch }));
  const groupNames = useGroupNames();
  // A group the channel names is shown even if it is gone from the list.
  const offeredGroups = [...new Set([...(groupNames ?? []), ...f.groups])];
  const toggleGroup = (g: string, on: boolean) => set({ groups: on ? [...f.groups, g] : f.groups.filter((x) => x !== g) });
  const env = c ? envSource(c) : null;
  const local = env === 'LOCAL';
  const type = providers.types.find((p) => p.type === f.type);
  const title = c ? t('channels.form.editTitle', { name: c.name }) : t('channels.form.newTitle');
  const formRef = useRef<HTMLFormElement>(null);
  // The form opens above the list: bring it into view (an edit may start far down a page).
  useEffect(() => {
    formRef.current?.scrollIntoView({ block: 'nearest' });
    formRef.current?.querySelector('input')?.focus({ preventScroll: true });
  }, []);

  const pickPreset = (env: string) => {
    const p = providers.presets.find((x) => x.env === env);
    if (p) set({ type: p.type, baseUrl: p.base_url ?? '', models: p.models.join('\n'), name: f.name || p.env.toLowerCase() });
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    let input: ChannelInput;
    try {
      input = toInput(f, c, providers, t);
    } catch (err) {
      return setError(err);
    }
    setBusy(true);
    try {
      const id = c ? (Object.keys(input).length ? await channelsApi.update(c.id, input) : c).id : (await channelsApi.create(input)).id;
      onDone(await channelsApi.get(id));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <form ref={formRef} className="card stack ch-form" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      {env && (
        <p className="notice warn">
          <span>{local ? t('channels.form.localNote') : t('channels.form.envNote', { variable: env })}</span>
        </p>
      )}
      <div className="ch-grid">
        <label>
          <span>{t('channels.form.name')}</span>
          <input value={f.name} maxLength={100} onChange={(e) => set({ name: e.target.value })} placeholder={c ? undefined : t('channels.form.nameHint')} />
        </label>
        {!c && (
          <label>
            <span>{t('channels.form.preset')}</span>
            <select value="" onChange={(e) => pickPreset(e.target.value)}>
              <option value="">{t('channels.form.presetNone')}</option>
              {providers.presets.map((p) => (
                <option key={p.env} value={p.env}>
                  {t('channels.form.presetOption', { env: p.env, url: p.base_url ?? t('channels.form.presetOwnUrl') })}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          <span>{t('channels.form.type')}</span>
          <select value={f.type} disabled={local} onChange={(e) => set({ type: e.target.value })}>
            {!type && <option value={f.type}>{f.type}</option>}
            {providers.types.map((p) => (
              <option key={p.type} value={p.type}>
                {t('channels.form.typeOption', { label: p.label, type: p.type })}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('channels.form.baseUrl')}</span>
          <input
            type="url"
            value={f.baseUrl}
            disabled={local}
            onChange={(e) => set({ baseUrl: e.target.value })}
            placeholder={type?.default_base_url ?? (f.type === 'azure' ? 'https://<resource>.openai.azure.com' : '')}
          />
        </label>
        {!local && (
          <label>
            <span>{t('channels.form.keyStrategy')}</span>
            <select value={f.keyStrategy} onChange={(e) => set({ keyStrategy: e.target.value as Fields['keyStrategy'] })}>
              <option value="round-robin">{t('channels.keyStrategy.round-robin')}</option>
              <option value="random">{t('channels.keyStrategy.random')}</option>
            </select>
          </label>
        )}
        <label>
          <span>{t('channels.form.priority')}</span>
          <input type="number" step={1} value={f.priority} onChange={(e) => set({ priority: e.target.value })} />
        </label>
        <label>
          <span>{t('channels.form.weight')}</span>
          <input type="number" step={1} min={0} value={f.weight} onChange={(e) => set({ weight: e.target.value })} />
        </label>
        {f.type === 'azure' && (
          <label>
            <span>{t('channels.form.apiVersion')}</span>
            <input value={f.apiVersion} onChange={(e) => set({ apiVersion: e.target.value })} placeholder="2024-10-21" />
          </label>
        )}
      </div>
      {!local && (
        <Area
          label={t('channels.form.key')}
          hint={`${
            c?.key_set
              ? c.keys.length > 1
                ? t('channels.form.keysKept', { n: c.keys.length })
                : t('channels.form.keyKept')
              : c
                ? t('channels.form.keyNone')
                : type?.key_required
                  ? t('channels.form.keyRequired')
                  : t('channels.form.keyOptional')
          } ${t('channels.form.keyLines')}`}
        >
          {(id, hint) => (
            <textarea
              id={id}
              className="ch-key-input"
              aria-describedby={hint}
              value={f.key}
              rows={Math.min(6, Math.max(2, f.key.split('\n').length))}
              autoComplete="off"
              spellCheck={false}
              wrap="off"
              onChange={(e) => set({ key: e.target.value })}
            />
          )}
        </Area>
      )}
      <Area label={t('channels.form.models')} hint={t('channels.form.modelsHint')}>
        {(id, hint) => (
          <textarea id={id} aria-describedby={hint} value={f.models} disabled={local} rows={4} onChange={(e) => set({ models: e.target.value })} />
        )}
      </Area>
      <Area label={t('channels.form.mapping')} hint={t('channels.form.mappingHint')}>
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            value={f.mapping}
            rows={3}
            spellCheck={false}
            placeholder='{"gpt-4o": "gpt-4o-2024-08-06"}'
            onChange={(e) => set({ mapping: e.target.value })}
          />
        )}
      </Area>
      <fieldset className="ch-groups">
        <legend>{t('channels.form.groups')}</legend>
        <div className="row">
          {offeredGroups.map((g) => (
            <label key={g} className="ch-check">
              <input type="checkbox" checked={f.groups.includes(g)} onChange={(e) => toggleGroup(g, e.target.checked)} />
              <span>{g}</span>
            </label>
          ))}
        </div>
        <span className="muted ch-small">{t('channels.form.groupsHint')}</span>
      </fieldset>
      <label className="ch-check">
        <input type="checkbox" checked={f.streamUsage} onChange={(e) => set({ streamUsage: e.target.checked })} />
        <span>{t('channels.form.streamUsage')}</span>
      </label>
      <ActionError error={error} />
      <FormButtons
        busy={busy}
        label={c ? t('channels.form.save') : t('channels.form.create')}
        busyLabel={t('channels.form.saving')}
        cancelLabel={t('channels.form.cancel')}
        onCancel={() => onDone(null)}
      />
    </form>
  );
}

/** A textarea with its label beside it (a label around a textarea would take the text into its name). */
function Area({ label, hint, children }: { label: string; hint: string; children: (id: string, hintId: string) => ReactNode }) {
  const id = useId();
  const hintId = useId();
  return (
    <div className="ch-area">
      <label htmlFor={id}>
        <span>{label}</span>
      </label>
      {children(id, hintId)}
      <span id={hintId} className="muted ch-small">
        {hint}
      </span>
    </div>
  );
}
