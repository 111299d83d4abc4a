// /apps/:appId: every setting of one application in one form, saved with the
// changed fields only, the platform's 400 (naming the field) and its warnings
// shown beside the form, then re-read so that "Saved" is what the platform
// holds. The test chat beside it chats with the saved settings.
import type { ListDatasetsBody, UpdateAppBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, withQuery, type ModelList, type PublicApp, type PublicDataset } from '../api';
import { useLang } from '../i18n';
import { Boundary, Loading } from '../ui';
import { ClassifySection } from './ClassifySection';
import { appKey } from './queries';
import { SUBPAGES } from './AppSubpage';
import { changedFields, fromApp, isDirty, localProblems, promptVariables, type Draft } from './draft';
import { ExtractSection } from './ExtractSection';
import { GeneralSection } from './GeneralSection';
import { KnowledgeSection } from './KnowledgeSection';
import { useLeaveGuard } from './leave-guard';
import { QuoteSection } from './QuoteSection';
import { apiEnvelope } from '../api';
import { SaveBar } from './SaveBar';
import { TestPane } from './TestPane';
import { ToolsSection } from './ToolsSection';

export interface Loaded {
  app: PublicApp;
  models: ModelList;
  datasets: PublicDataset[];
}

const loadApp = (appId: string, signal?: AbortSignal) => api<PublicApp>(withQuery('/api/core/app/detail', { appId }), { signal });

export function SettingsPage({ appId }: { appId: string }) {
  // Read fresh each time the page opens (gcTime 0): the form starts from what the platform holds, never a kept copy.
  const { data } = useQuery({
    queryKey: [...appKey(appId), 'settings'],
    queryFn: async ({ signal }): Promise<Loaded> => {
      const [app, models, datasets] = await Promise.all([
        loadApp(appId, signal),
        api<ModelList>('/api/core/ai/model/list', { signal }),
        api<PublicDataset[]>('/api/core/dataset/list', { json: {} satisfies ListDatasetsBody, signal }),
      ]);
      return { app, models, datasets };
    },
    gcTime: 0,
  });
  if (!data) return <Loading />;
  return <SettingsForm appId={appId} loaded={data} />;
}

/** Which section a field named by the platform ('search.limit', 'classify.categories[0].id') belongs to. */
function sectionOf(field: string): string {
  const head = field.split(/[.[]/)[0] ?? '';
  if (['datasets', 'search'].includes(head)) return 'knowledge';
  if (['quoteTemplate', 'quotePrompt'].includes(head)) return 'quote';
  if (['classify', 'extract'].includes(head)) return head;
  if (['tools', 'toolRounds'].includes(head)) return 'tools';
  return 'general';
}

function SettingsForm({ appId, loaded }: { appId: string; loaded: Loaded }) {
  const { t } = useLang();
  const client = useQueryClient();
  const [saved, setSaved] = useState<Draft>(() => fromApp(loaded.app));
  const [draft, setDraft] = useState<Draft>(saved);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [warning, setWarning] = useState('');
  const [justSaved, setJustSaved] = useState(false);
  const dirty = isDirty(saved, draft);
  const llm = loaded.models.models.find((m) => m.kind === 'llm' && m.model === draft.model);
  const problems = localProblems(saved, draft, llm);
  useLeaveGuard(dirty, t('apps.leave.confirm'));

  const change = (patch: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    setJustSaved(false);
  };

  async function save(e?: FormEvent) {
    e?.preventDefault();
    if (problems.length > 0 || !dirty) return;
    setBusy(true);
    setError(null);
    try {
      const { message } = await apiEnvelope<PublicApp>('/api/core/app/update', {
        method: 'PUT',
        json: { appId, ...changedFields(saved, draft) } satisfies UpdateAppBody,
      });
      // What the platform holds now, not what was sent.
      const app = await loadApp(appId);
      const fresh = fromApp(app);
      // Its name and model as the other pages show them (the lists and the chat's header).
      client.setQueryData(appKey(appId), app);
      void client.invalidateQueries({ queryKey: ['apps'], predicate: (q) => q.queryKey[1] !== appId });
      setSaved(fresh);
      setDraft(fresh);
      setWarning(message);
      setJustSaved(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const invalidField = error instanceof Error ? /^Invalid '([^']+)'/.exec(error.message)?.[1] : undefined;
  const invalid = invalidField ? sectionOf(invalidField) : undefined;
  const props = { draft, change, models: loaded.models.models, datasets: loaded.datasets };
  // The variables the test chat asks for: the saved prompt's, less those extraction fills.
  const extracted = new Set(saved.extract?.fields.map((f) => f.key) ?? []);
  const chatKey = promptVariables(saved.systemPrompt)
    .filter((v) => !extracted.has(v))
    .join(',');

  return (
    <div className="ap-settings">
      <nav className="ap-breadcrumb" aria-label={t('apps.breadcrumb')}>
        <Link href="/">
          <span>{t('apps.title')}</span>
        </Link>
        <span aria-hidden="true">/</span>
        <span className="ap-name">{saved.name}</span>
      </nav>
      <div className="ap-head">
        <h1 className="ap-name">{saved.name}</h1>
        {dirty && (
          <span className="badge warn">
            <span>{t('apps.unsaved')}</span>
          </span>
        )}
        <Link href={withQuery('~/chat', { appId })}>
          <span>{t('apps.openChat')}</span>
        </Link>
        {SUBPAGES.map((p) => (
          <Link key={p.path} href={`/${encodeURIComponent(appId)}/${p.path}`}>
            <span>{t(p.title)}</span>
          </Link>
        ))}
      </div>
      <div className="ap-layout">
        <form className="ap-form" onSubmit={save} aria-label={t('apps.settingsOf', { name: saved.name })} noValidate>
          <Boundary>
            <GeneralSection {...props} invalid={invalid === 'general'} />
          </Boundary>
          <Boundary>
            <KnowledgeSection {...props} invalid={invalid === 'knowledge'} />
          </Boundary>
          <Boundary>
            <ToolsSection {...props} invalid={invalid === 'tools'} />
          </Boundary>
          <Boundary>
            <QuoteSection {...props} invalid={invalid === 'quote'} />
          </Boundary>
          <Boundary>
            <ClassifySection {...props} invalid={invalid === 'classify'} />
          </Boundary>
          <Boundary>
            <ExtractSection {...props} invalid={invalid === 'extract'} />
          </Boundary>
          <SaveBar
            dirty={dirty}
            busy={busy}
            saved={justSaved && !dirty}
            problems={problems}
            error={error}
            warning={warning}
            onDiscard={() => {
              setDraft(saved);
              setError(null);
            }}
          />
        </form>
        <aside className="ap-test" aria-label={t('apps.test.title')}>
          <Boundary>
            <TestPane appId={appId} dirty={dirty} chatKey={chatKey} />
          </Boundary>
        </aside>
      </div>
    </div>
  );
}
