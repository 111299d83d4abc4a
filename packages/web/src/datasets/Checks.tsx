// /datasets/:datasetId/checks: the dataset's saved retrieval checks, each with
// its result in the last run, edited or deleted in place; "Run all" and the
// difference to the run before.
import type { CreateCheckBody, UpdateCheckBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, withQuery, type CheckResult, type PublicDataset, type PublicRetrievalCheck } from '../api';
import { DeleteButton } from '../actions';
import { useLang } from '../i18n';
import { Boundary, Loading } from '../ui';
import { CheckEditor, ExpectationText, type CheckDraft } from './CheckEditor';
import { CheckRunPanel } from './CheckRun';

const LIST = '/api/core/dataset/check/list';

export function Checks({ dataset }: { dataset: PublicDataset }) {
  const { t } = useLang();
  const datasetId = dataset._id;
  const client = useQueryClient();
  const key = ['datasets', datasetId, 'checks'];
  const { data: checks } = useQuery({ queryKey: key, queryFn: ({ signal }) => api<PublicRetrievalCheck[]>(withQuery(LIST, { datasetId }), { signal }) });
  const reload = () => client.invalidateQueries({ queryKey: key });
  const [adding, setAdding] = useState(false);

  async function create(d: CheckDraft) {
    await api<string>('/api/core/dataset/check/create', { json: { datasetId, ...d } satisfies CreateCheckBody });
    setAdding(false);
    await reload();
  }

  return (
    <section className="stack" aria-labelledby="ck-title">
      <h2 id="ck-title">{t('checks.title')}</h2>
      <p className="muted">
        <span>{t('checks.intro')}</span>
      </p>
      {!checks ? (
        <Loading />
      ) : (
        <>
          <Boundary>
            <CheckRunPanel datasetId={datasetId} count={checks.length} onRan={() => void reload()} />
          </Boundary>
          {checks.length === 0 && (
            <p className="muted">
              <span>{t('checks.empty')}</span>
            </p>
          )}
          <ul className="ck-list">
            {checks.map((c) => (
              <CheckItem key={c.id} check={c} onChanged={reload} />
            ))}
          </ul>
        </>
      )}
      {adding ? (
        <CheckEditor initial={{ question: '', expected: [], settings: {} }} onSave={create} onCancel={() => setAdding(false)} />
      ) : (
        <div className="row">
          <button type="button" className="secondary" onClick={() => setAdding(true)}>
            <span>{t('checks.add')}</span>
          </button>
        </div>
      )}
    </section>
  );
}

function CheckItem({ check, onChanged }: { check: PublicRetrievalCheck; onChanged: () => Promise<void> }) {
  const { t, count } = useLang();
  const [editing, setEditing] = useState(false);
  const last = check.last;
  const s = check.settings;

  async function save(d: CheckDraft) {
    await api('/api/core/dataset/check/update', { method: 'PUT', json: { id: check.id, ...d } satisfies UpdateCheckBody });
    setEditing(false);
    await onChanged();
  }

  if (editing)
    return (
      <li>
        <CheckEditor
          initial={{ question: check.question, expected: check.expected, settings: check.settings }}
          onSave={save}
          onCancel={() => setEditing(false)}
        />
      </li>
    );
  return (
    <li className={`card stack ck-item ${last && !last.passed ? 'ck-failing' : ''}`}>
      <div className="ck-item-head">
        <span className="ck-question">{check.question}</span>
        <span className="row">
          {last ? (
            <span className={`badge ${last.passed ? 'ok' : 'bad'}`}>{last.passed ? t('checks.passed') : t('checks.failed')}</span>
          ) : (
            <span className="badge">{t('checks.notRun')}</span>
          )}
          {last?.stale && <span className="badge warn">{t('checks.stale')}</span>}
        </span>
      </div>
      <ul className="ck-expected">
        {check.expected.map((e, i) => (
          <li key={i}>
            <ExpectationText e={e} />
            {last && !last.stale && <RankBadge r={last.expectations[i]} />}
          </li>
        ))}
      </ul>
      {last?.error && (
        <p className="error ds-small">
          <span>{t('checks.error', { message: last.error })}</span>
        </p>
      )}
      <p className="muted ds-small">
        <span>{t('checks.settingsLine', { mode: t(`datasets.mode.${s.searchMode}`), similarity: s.similarity, limit: count(s.limit) })}</span>
        {s.usingReRank && <span>{` · ${t('checks.rerank')}`}</span>}
        {s.datasetSearchUsingExtensionQuery && <span>{` · ${t('checks.extension')}`}</span>}
      </p>
      <div className="ds-actions">
        <button type="button" className="secondary" aria-label={t('checks.editNamed', { name: check.question })} onClick={() => setEditing(true)}>
          <span>{t('common.edit')}</span>
        </button>
        <DeleteButton
          name={check.question}
          onDelete={async () => {
            await api(withQuery('/api/core/dataset/check/delete', { id: check.id }), { method: 'DELETE' });
            await onChanged();
          }}
        />
      </div>
    </li>
  );
}

function RankBadge({ r }: { r: CheckResult['expectations'][number] | undefined }) {
  const { t } = useLang();
  if (!r) return null;
  if (r.rank !== null) return <span className="badge ok">{t('checks.rank', { rank: r.rank })}</span>;
  if (r.dropped) return <span className="badge bad">{t(`checks.droppedBy.${r.dropped.reason}`, { rank: r.dropped.rank })}</span>;
  return <span className="badge bad">{t('checks.notFound')}</span>;
}
