// /groups: price groups, for administrators. Each group's ratio (what its
// callers pay, times the price) and what uses it (users, tokens, channels);
// add a group, edit its ratio and description, delete one that nothing uses
// (the gateway refuses `default` and a group in use, in its own words). Every
// save is read back from the gateway before the page says it was saved.
import type { GroupBody, GroupsAnswer, PublicGroup } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ActionError, DeleteButton, FormButtons } from '../../actions';
import { useLang } from '../../i18n';
import { Loading, Table } from '../../ui';
import { gatewayApi, type GatewayUser } from '../gateway-api';
import { groupsQuery } from './group-names';
import { useLimitsEditor } from '../limits/useLimitsEditor';
import '../console.css';
import './groups.css';

/** The gateway's own (contracts' DEFAULT_GROUP), named here so that the page loads no schema. */
const DEFAULT_GROUP = 'default';
const groupPath = (name: string) => `/api/groups/${encodeURIComponent(name)}`;
/** A ratio as people read it: up to six decimals, no trailing zeros. */
const showRatio = (r: number) => String(Number(r.toFixed(6)));

export default function GroupsPage({ me }: { me: GatewayUser }) {
  void me;
  const { t } = useLang();
  const client = useQueryClient();
  // undefined: no form; null: adding a group; a group: editing that one.
  const [editing, setEditing] = useState<PublicGroup | null | undefined>(undefined);
  const [saved, setSaved] = useState('');
  const { data } = useQuery<GroupsAnswer>(groupsQuery);
  const reload = () => void client.invalidateQueries({ queryKey: ['groups'] });
  // A group's rate limits bind all its callers together.
  const limits = useLimitsEditor(true);

  const remove = async (g: PublicGroup) => {
    setSaved('');
    await gatewayApi(groupPath(g.name), { method: 'DELETE' });
    setSaved(t('groups.deleted', { name: g.name }));
    reload();
  };
  const open = (g: PublicGroup | null) => {
    setSaved('');
    setEditing(g);
  };

  return (
    <section className="stack">
      <h1>{t('groups.title')}</h1>
      <p className="muted">
        <span>{t('groups.intro')}</span>
      </p>
      {saved && (
        <p role="status" className="notice ok">
          <span>{saved}</span>
        </p>
      )}
      {limits.notice}
      {limits.editor}
      {editing !== undefined ? (
        <GroupForm
          key={editing?.name ?? '\u0000new'}
          group={editing}
          onDone={(fresh) => {
            setEditing(undefined);
            if (!fresh) return;
            setSaved(t('groups.saved', { name: fresh.name, ratio: showRatio(fresh.ratio) }));
            reload();
          }}
        />
      ) : (
        <div className="row">
          <button type="button" onClick={() => open(null)}>
            <span>{t('groups.add')}</span>
          </button>
        </div>
      )}
      {!data ? (
        <Loading />
      ) : (
        <Table
          className="console-table groups-table"
          rows={data.data}
          rowKey={(g) => g.name}
          columns={[
            {
              header: t('groups.col.name'),
              cell: (g) => (
                <>
                  <strong>{g.name}</strong>
                  {(g.description || g.name === DEFAULT_GROUP) && (
                    <div className="muted group-description">
                      <span>{g.description || t('groups.default')}</span>
                    </div>
                  )}
                </>
              ),
            },
            {
              header: t('groups.col.ratio'),
              cell: (g) => (
                <>
                  <span data-testid="ratio">{showRatio(g.ratio)}</span>
                  <div className="muted">
                    <span>{t('groups.percent', { percent: showRatio(g.ratio * 100) })}</span>
                  </div>
                </>
              ),
            },
            {
              header: t('groups.col.usedBy'),
              cell: (g) => (
                <span data-testid="used-by">
                  {g.users + g.tokens + g.channels === 0 ? t('groups.unused') : t('groups.usedBy', { users: g.users, tokens: g.tokens, channels: g.channels })}
                </span>
              ),
            },
            { header: t('limits.button'), cell: (g) => <span data-testid="group-rate-limits">{limits.summary('group', g.name)}</span> },
            {
              header: t('groups.col.actions'),
              cell: (g) => (
                <div className="row">
                  <button type="button" className="secondary" aria-label={t('groups.editNamed', { name: g.name })} onClick={() => open(g)}>
                    <span>{t('groups.edit')}</span>
                  </button>
                  {limits.button('group', g.name, g.name)}
                  {g.name !== DEFAULT_GROUP && <DeleteButton name={g.name} onDelete={() => remove(g)} />}
                </div>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}

/** Adds a group or edits one; `onDone` gets the group as the gateway then holds it, or null when cancelled. */
function GroupForm({ group, onDone }: { group: PublicGroup | null; onDone: (fresh: PublicGroup | null) => void }) {
  const { t } = useLang();
  const [name, setName] = useState(group?.name ?? '');
  const [ratio, setRatio] = useState(group ? showRatio(group.ratio) : '1');
  const [description, setDescription] = useState(group?.description ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const n = Number(ratio);
    if (ratio.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1000) return setError(new Error(t('groups.badRatio')));
    // The gateway checks the name's letters, and says which it refuses.
    const named = name.trim();
    if (!named) return setError(new Error(t('groups.needName')));
    setBusy(true);
    setError(null);
    try {
      await gatewayApi(groupPath(named), { method: 'PUT', json: { ratio: n, description: description.trim() } satisfies GroupBody });
      onDone(await gatewayApi<PublicGroup>(groupPath(named)));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const title = group ? t('groups.editTitle', { name: group.name }) : t('groups.addTitle');
  return (
    <form className="card stack" onSubmit={submit} aria-label={title}>
      <strong>{title}</strong>
      <div className="group-form-grid">
        {!group && (
          <label>
            <span>{t('groups.name')}</span>
            <input required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} aria-describedby="group-name-hint" autoComplete="off" />
            <small id="group-name-hint" className="muted">
              {t('groups.nameHint')}
            </small>
          </label>
        )}
        <label>
          <span>{t('groups.ratio')}</span>
          <input inputMode="decimal" value={ratio} onChange={(e) => setRatio(e.target.value)} aria-describedby="group-ratio-hint" />
          <small id="group-ratio-hint" className="muted">
            {t('groups.ratioHint')}
          </small>
        </label>
        <label>
          <span>{t('groups.description')}</span>
          <input maxLength={255} value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
      </div>
      <ActionError error={error} />
      <FormButtons busy={busy} label={t('groups.save')} busyLabel={t('groups.saving')} cancelLabel={t('groups.cancel')} onCancel={() => onDone(null)} />
    </form>
  );
}
