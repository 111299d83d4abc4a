// Creates or edits one API token: name, owner (an administrator creating for
// someone), quota, expiry, model and IP allow-lists, and (administrators only)
// the token's own price group. After saving it reads the
// token back, so what the page then shows is what the gateway holds.
import type { CreateTokenBody, PatchTokenBody } from '@kbchat/contracts';
import { useState, type FormEvent } from 'react';
import { ActionError, FormButtons } from '../../actions';
import { useLang } from '../../i18n';
import { formatUnits, gatewayApi, isAdmin, type GatewayCreatedToken, type GatewayToken, type GatewayUser } from '../gateway-api';
import { useGroupNames } from '../groups/group-names';

const MICROS = 1_000_000;

/** epoch ms as a datetime-local input's value, in this browser's time zone. */
function toLocalInput(ms: number | null): string {
  if (ms === null) return '';
  const d = new Date(ms);
  return new Date(ms - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export interface Saved {
  token: GatewayToken;
  /** The key, on creation only. */
  key?: string;
}

export function TokenForm({
  token,
  owners,
  me,
  onDone,
}: {
  token?: GatewayToken;
  owners?: GatewayUser[];
  me: GatewayUser;
  onDone: (saved: Saved | null) => void;
}) {
  const { t } = useLang();
  const [name, setName] = useState(token?.name ?? '');
  const [owner, setOwner] = useState(String(token?.user_id ?? me.id));
  const [quota, setQuota] = useState(token?.quota_limit_micros == null ? '' : formatUnits(token.quota_limit_micros / MICROS).replace(/,/g, ''));
  const [expires, setExpires] = useState(toLocalInput(token?.expires_at ?? null));
  const [models, setModels] = useState((token?.models ?? []).join(', '));
  const [ipAllow, setIpAllow] = useState(token?.ip_allow ?? '');
  // '': the owner's group. Only administrators see or set it (the gateway refuses anyone else).
  const admin = isAdmin(me);
  const [group, setGroup] = useState(token?.group ?? '');
  const groups = useGroupNames(admin);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const quotaUnits = quota.trim() === '' ? null : Number(quota);
    if (quotaUnits !== null && (!Number.isFinite(quotaUnits) || quotaUnits < 0)) return setError(new Error(t('tokens.badQuota')));
    const expiresAt = expires === '' ? null : new Date(expires).getTime();
    if (expiresAt !== null && !(expiresAt > Date.now())) return setError(new Error(t('tokens.badExpiry')));
    const fields = {
      name: name.trim(),
      quota_limit: quotaUnits,
      expires_at: expiresAt,
      models: list(models),
      ip_allow: ipAllow.trim() === '' ? null : ipAllow.trim(),
      // Sent when it changes, so that a plain user's form never sends it.
      ...(admin && group !== (token?.group ?? '') ? { group: group || null } : {}),
    };
    setBusy(true);
    setError(null);
    try {
      let id = token?.id;
      let key: string | undefined;
      if (id === undefined) {
        const created = await gatewayApi<GatewayCreatedToken>('/api/tokens', {
          json: { ...fields, user_id: Number(owner) } satisfies CreateTokenBody,
        });
        id = created.token.id;
        key = created.key;
      } else {
        await gatewayApi(`/api/tokens/${id}`, { method: 'PATCH', json: fields satisfies PatchTokenBody });
      }
      onDone({ token: await gatewayApi<GatewayToken>(`/api/tokens/${id}`), key });
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const title = token ? t('tokens.editTitle', { name: token.name }) : t('tokens.createTitle');
  return (
    <form className="card stack" onSubmit={submit} aria-label={title}>
      <strong>{title}</strong>
      <div className="token-form-grid">
        <label>
          <span>{t('tokens.name')}</span>
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        {!token && owners && (
          <label>
            <span>{t('tokens.owner')}</span>
            <select value={owner} onChange={(e) => setOwner(e.target.value)}>
              {owners.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.username}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          <span>{t('tokens.quota')}</span>
          <input inputMode="decimal" value={quota} onChange={(e) => setQuota(e.target.value)} aria-describedby="token-quota-hint" />
          <small id="token-quota-hint" className="muted">
            {t('tokens.quotaHint')}
          </small>
        </label>
        <label>
          <span>{t('tokens.expires')}</span>
          <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} aria-describedby="token-expires-hint" />
          <small id="token-expires-hint" className="muted">
            {t('tokens.expiresHint')}
          </small>
        </label>
        <label>
          <span>{t('tokens.models')}</span>
          <input
            value={models}
            onChange={(e) => setModels(e.target.value)}
            placeholder="gpt-4o-mini, text-embedding-3-small"
            aria-describedby="token-models-hint"
          />
          <small id="token-models-hint" className="muted">
            {t('tokens.modelsHint')}
          </small>
        </label>
        {admin && (
          <label>
            <span>{t('tokens.group')}</span>
            <select value={group} onChange={(e) => setGroup(e.target.value)} aria-describedby="token-group-hint">
              <option value="">{t('tokens.ownersGroup')}</option>
              {[...new Set([...(group ? [group] : []), ...(groups ?? [])])].map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
            <small id="token-group-hint" className="muted">
              {t('tokens.groupHint')}
            </small>
          </label>
        )}
        <label>
          <span>{t('tokens.ipAllow')}</span>
          <input value={ipAllow} onChange={(e) => setIpAllow(e.target.value)} placeholder="127.0.0.1, 10.0.0.0/8" aria-describedby="token-ip-hint" />
          <small id="token-ip-hint" className="muted">
            {t('tokens.ipAllowHint')}
          </small>
        </label>
      </div>
      <ActionError error={error} />
      <FormButtons
        busy={busy}
        label={token ? t('tokens.save') : t('tokens.create')}
        busyLabel={t('tokens.saving')}
        cancelLabel={t('common.cancel')}
        onCancel={() => onDone(null)}
      />
    </form>
  );
}
