// /tools/:sourceId: one source, its facts and its tools (name, description,
// the input schema folded away: it is for the model, and often long), with
// Refresh and Delete (which goes back to the list).
import { useQueryClient } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { DeleteButton } from '../actions';
import type { PublicTool } from '../api';
import { useLang } from '../i18n';
import { Loading } from '../ui';
import { deleteToolSource, useToolSource } from './queries';
import { RefreshButton, SourceFacts, TypeBadge } from './SourceParts';

export function SourcePage({ sourceId }: { sourceId: string }) {
  const { t } = useLang();
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const { data: source } = useToolSource(sourceId);
  if (!source) return <Loading />;
  return (
    <section className="stack">
      <nav className="tl-breadcrumb" aria-label={t('tools.breadcrumb')}>
        <Link href="/">
          <span>{t('tools.title')}</span>
        </Link>
        <span aria-hidden="true">/</span>
        <span>{source.name}</span>
      </nav>
      <div className="row">
        <h1 className="tl-name">{source.name}</h1>
        <TypeBadge type={source.type} />
      </div>
      <div className="card stack">
        <SourceFacts source={source} showAdded />
        <div className="row tl-actions">
          <RefreshButton source={source} />
          <DeleteButton
            name={source.name}
            onDelete={async () => {
              await deleteToolSource(client, source.id);
              navigate('/');
            }}
          />
        </div>
      </div>
      <section className="stack tl-tools-section" aria-labelledby="tl-tools-title">
        <h2 id="tl-tools-title">{t('tools.detail.tools')}</h2>
        {source.tools.length === 0 ? (
          <p className="muted">
            <span>{t('tools.detail.none')}</span>
          </p>
        ) : (
          <ul className="tl-tools">
            {source.tools.map((tool) => (
              <ToolItem key={tool.name} tool={tool} />
            ))}
          </ul>
        )}
      </section>
    </section>
  );
}

function ToolItem({ tool }: { tool: PublicTool }) {
  const { t } = useLang();
  return (
    <li className="card tl-tool">
      <h3>
        <code>{tool.name}</code>
      </h3>
      <p className={tool.description ? 'tl-description' : 'tl-description muted'}>
        <span>{tool.description || t('tools.detail.noDescription')}</span>
      </p>
      <details>
        <summary>
          <span>{t('tools.detail.schema')}</span>
        </summary>
        <pre className="tl-schema">{JSON.stringify(tool.inputSchema, null, 2)}</pre>
      </details>
    </li>
  );
}
