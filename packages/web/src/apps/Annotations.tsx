// /apps/:appId/annotations: the application's curated answers. Annotation
// reply (on or off, and how close a question must be) saved with the app;
// the annotations searched and paged by the platform, added, edited and
// deleted in place; imported from a CSV file (AnnotationImport.tsx) and
// exported as one.
import type { CreateAnnotationBody, ListAnnotationsQuery, UpdateAnnotationBody, UpdateAppBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ActionError, DeleteButton } from '../actions';
import { api, withQuery, type AnnotationReply, type Page, type PublicAnnotation, type PublicApp } from '../api';
import { useLang } from '../i18n';
import { keepPreviousData, useDebounced } from '../query';
import { Boundary, formatTime, Loading, Pager } from '../ui';
import { AnnotationForm, type QuestionAnswer } from './AnnotationForm';
import { AnnotationImport } from './AnnotationImport';
import { AppSubpage } from './AppSubpage';
import { CheckField, NumberField } from './fields';
import { annotationsKey, appKey, useAppDetail } from './queries';

const PAGE = 20;
/** How much of a question names its annotation in a button's label. */
const NAME_CHARS = 60;
const nameOf = (a: PublicAnnotation) => (a.question.length > NAME_CHARS ? `${a.question.slice(0, NAME_CHARS)}…` : a.question);

export function AnnotationsPage({ appId }: { appId: string }) {
  const { t } = useLang();
  const client = useQueryClient();
  const [adding, setAdding] = useState(false);
  const changed = () => client.invalidateQueries({ queryKey: annotationsKey(appId) });
  async function add(v: QuestionAnswer) {
    await api<string>('/api/core/app/annotation/create', { json: { appId, ...v } satisfies CreateAnnotationBody });
    await changed();
    setAdding(false);
  }
  return (
    <AppSubpage appId={appId} title={t('annotations.title')}>
      <p className="muted">
        <span>{t('annotations.intro')}</span>
      </p>
      <Boundary>
        <ReplySetting appId={appId} />
      </Boundary>
      <div className="row">
        {!adding && (
          <button type="button" onClick={() => setAdding(true)}>
            <span>{t('annotations.add')}</span>
          </button>
        )}
        <a className="ap-button-link secondary" href={withQuery('/api/core/app/annotation/export', { appId })} download>
          <span>{t('annotations.export')}</span>
        </a>
        {/* Last: what an import made and left out shows below the buttons, across the row. */}
        <AnnotationImport appId={appId} onImported={changed} />
      </div>
      <p className="muted ap-small">
        <span>{t('annotations.importHint')}</span>
      </p>
      {adding && (
        <div className="card">
          <AnnotationForm title={t('annotations.new')} initial={{ question: '', answer: '' }} onSave={add} onCancel={() => setAdding(false)} />
        </div>
      )}
      <Boundary>
        <AnnotationList appId={appId} />
      </Boundary>
    </AppSubpage>
  );
}

function ReplySetting({ appId }: { appId: string }) {
  const { t } = useLang();
  const client = useQueryClient();
  const { data: app } = useAppDetail(appId);
  const saved = app?.annotationReply;
  const [draft, setDraft] = useState<{ enabled: boolean; similarity: number | undefined } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [justSaved, setJustSaved] = useState(false);
  if (!saved) return <Loading />;
  const shown = draft ?? saved;
  const valid = shown.similarity !== undefined && shown.similarity >= 0 && shown.similarity <= 1;
  const dirty = shown.enabled !== saved.enabled || shown.similarity !== saved.similarity;
  const change = (patch: Partial<typeof shown>) => {
    setDraft({ ...shown, ...patch });
    setJustSaved(false);
  };

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!valid || !dirty) return;
    setBusy(true);
    setError(null);
    try {
      const annotationReply: AnnotationReply = { enabled: shown.enabled, similarity: shown.similarity! };
      await api<PublicApp>('/api/core/app/update', { method: 'PUT', json: { appId, annotationReply } satisfies UpdateAppBody });
      // "Saved" is what the platform holds: the app read again, the form showing it.
      await client.invalidateQueries({ queryKey: appKey(appId), exact: true });
      setDraft(null);
      setJustSaved(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card stack" aria-label={t('annotations.reply')} onSubmit={save}>
      <h2 className="ap-card-title">
        <span>{t('annotations.reply')}</span>
      </h2>
      <div className="ap-grid2">
        <CheckField label={t('annotations.reply.enabled')} checked={shown.enabled} onChange={(enabled) => change({ enabled })} />
        <NumberField
          label={t('annotations.reply.similarity')}
          value={shown.similarity}
          onChange={(similarity) => change({ similarity })}
          min={0}
          max={1}
          step={0.01}
          hint={t('annotations.reply.similarityHint')}
          error={valid ? undefined : t('annotations.reply.similarityRange')}
        />
      </div>
      <ActionError error={error} />
      <div className="row">
        <button type="submit" disabled={busy || !valid || !dirty}>
          <span>{t('common.save')}</span>
        </button>
        {justSaved && !dirty && (
          <span className="muted" role="status">
            <span>{t('annotations.reply.saved')}</span>
          </span>
        )}
      </div>
    </form>
  );
}

function AnnotationList({ appId }: { appId: string }) {
  const { t, count } = useLang();
  const [search, setSearch] = useState('');
  const searchText = useDebounced(search.trim());
  // The page belongs to its search: a new search starts again at the first.
  const [paged, setPaged] = useState({ searchText, offset: 0 });
  const offset = paged.searchText === searchText ? paged.offset : 0;
  const { data } = useQuery({
    queryKey: [...annotationsKey(appId), { searchText, offset }],
    queryFn: ({ signal }) =>
      api<Page<PublicAnnotation>>(
        withQuery('/api/core/app/annotation/list', { appId, offset, pageSize: PAGE, searchText: searchText || undefined } satisfies ListAnnotationsQuery),
        { signal },
      ),
    placeholderData: keepPreviousData,
  });
  return (
    <div className="stack">
      <div className="row ap-filters">
        <label className="ap-search grow">
          <span>{t('annotations.search')}</span>
          <input type="search" value={search} maxLength={200} onChange={(e) => setSearch(e.target.value)} />
        </label>
        {data && (
          <span className="muted">
            <span>{t('annotations.total', { n: count(data.total) })}</span>
          </span>
        )}
      </div>
      {!data ? (
        <Loading />
      ) : data.list.length === 0 ? (
        <p>
          <span>{searchText ? t('annotations.noneFound') : t('annotations.none')}</span>
        </p>
      ) : (
        <ul className="ap-items" aria-label={t('annotations.title')}>
          {data.list.map((a) => (
            <li key={a.id} className="card">
              <AnnotationItem appId={appId} annotation={a} />
            </li>
          ))}
        </ul>
      )}
      {data && <Pager offset={offset} pageSize={PAGE} total={data.total} onOffset={(o) => setPaged({ searchText, offset: o })} />}
    </div>
  );
}

function AnnotationItem({ appId, annotation: a }: { appId: string; annotation: PublicAnnotation }) {
  const { t, lang } = useLang();
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const changed = () => client.invalidateQueries({ queryKey: annotationsKey(appId) });

  if (editing)
    return (
      <AnnotationForm
        title={t('annotations.editNamed', { name: nameOf(a) })}
        initial={a}
        onSave={async (v) => {
          await api('/api/core/app/annotation/update', { method: 'PUT', json: { id: a.id, ...v } satisfies UpdateAnnotationBody });
          await changed();
          setEditing(false);
        }}
        onCancel={() => setEditing(false)}
      />
    );
  return (
    <article className="ap-annotation stack" aria-label={a.question}>
      <strong className="ap-annotation-q">
        <span>{a.question}</span>
      </strong>
      <p className="ap-annotation-a">
        <span>{a.answer}</span>
      </p>
      <div className="row">
        <span className="muted ap-small grow">
          <span>
            {[
              t('annotations.hits', { n: a.hitCount }),
              t('annotations.updated', { time: formatTime(a.updateTime, lang) }),
              a.chatId ? t('annotations.fromChat') : '',
            ]
              .filter(Boolean)
              .join(' · ')}
          </span>
        </span>
        <button type="button" className="secondary" aria-label={t('annotations.editNamed', { name: nameOf(a) })} onClick={() => setEditing(true)}>
          <span>{t('common.edit')}</span>
        </button>
        <DeleteButton
          name={nameOf(a)}
          onDelete={async () => {
            await api(withQuery('/api/core/app/annotation/delete', { id: a.id }), { method: 'DELETE' });
            await changed();
          }}
        />
      </div>
    </article>
  );
}
