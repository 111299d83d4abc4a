// /tools: the team's tool sources, each with its address, header hints, how
// many tools it lists and when, Refresh and Delete; and the form that adds one
// (which opens the new source's page, its tools listed).
import { useQueryClient } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { DeleteButton } from '../actions';
import { useLang } from '../i18n';
import { Boundary, Loading } from '../ui';
import { AddSource } from './AddSource';
import { deleteToolSource, useToolSources } from './queries';
import { RefreshButton, SourceFacts, TypeBadge } from './SourceParts';

export function ToolsPage() {
  const { t } = useLang();
  const [, navigate] = useLocation();
  return (
    <section className="stack">
      <h1>{t('tools.title')}</h1>
      <p className="muted">
        <span>{t('tools.lead')}</span>
      </p>
      <Boundary>
        <AddSource onCreated={(id) => navigate(`/${encodeURIComponent(id)}`)} />
      </Boundary>
      <Boundary>
        <SourceList />
      </Boundary>
    </section>
  );
}

function SourceList() {
  const { t } = useLang();
  const client = useQueryClient();
  const { data: sources } = useToolSources();
  if (!sources) return <Loading />;
  if (sources.length === 0)
    return (
      <p className="muted">
        <span>{t('tools.empty')}</span>
      </p>
    );
  return (
    <ul className="tl-sources" aria-label={t('tools.title')}>
      {sources.map((s) => (
        <li key={s.id} className="card tl-card">
          <div className="row">
            <h2 className="tl-card-title">
              <Link href={`/${encodeURIComponent(s.id)}`}>{s.name}</Link>
            </h2>
            <TypeBadge type={s.type} />
          </div>
          <SourceFacts source={s} />
          <div className="row tl-actions">
            <RefreshButton source={s} />
            <DeleteButton name={s.name} onDelete={() => deleteToolSource(client, s.id)} />
          </div>
        </li>
      ))}
    </ul>
  );
}
