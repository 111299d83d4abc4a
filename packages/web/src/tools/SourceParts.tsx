// What the list and a source's own page both show of a source: its facts
// (type, addresses, transport, header hints, tools and when they were
// listed), and Refresh with its outcome beside it: the platform's error in
// its own words, which is the source's last error (a refresh that fails keeps
// the tools listed before).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ActionError } from '../actions';
import type { PublicToolSource } from '../api';
import { useLang } from '../i18n';
import { formatTime } from '../ui';
import { refreshToolSource } from './queries';

export function TypeBadge({ type }: { type: PublicToolSource['type'] }) {
  const { t } = useLang();
  return (
    <span className="badge">
      <span>{t(type === 'mcp' ? 'tools.type.mcp' : 'tools.type.openapi')}</span>
    </span>
  );
}

export function SourceFacts({ source, showAdded }: { source: PublicToolSource; showAdded?: boolean }) {
  const { t, lang } = useLang();
  return (
    <dl className="tl-facts">
      {source.url && (
        <div>
          <dt>
            <span>{t('tools.url')}</span>
          </dt>
          <dd>
            <code className="tl-url">{source.url}</code>
          </dd>
        </div>
      )}
      {source.baseUrl && (
        <div>
          <dt>
            <span>{t('tools.baseUrl')}</span>
          </dt>
          <dd>
            <code className="tl-url">{source.baseUrl}</code>
          </dd>
        </div>
      )}
      {source.transport && (
        <div>
          <dt>
            <span>{t('tools.transport')}</span>
          </dt>
          <dd>
            <span>{t(source.transport === 'sse' ? 'tools.transport.sse' : 'tools.transport.streamableHttp')}</span>
          </dd>
        </div>
      )}
      <div>
        <dt>
          <span>{t('tools.headers')}</span>
        </dt>
        <dd>
          {source.headers.length === 0 ? (
            <span className="muted">{t('tools.noHeaders')}</span>
          ) : (
            <ul className="tl-hints">
              {source.headers.map((h) => (
                <li key={h.name}>
                  <code>{`${h.name}: ${h.hint}`}</code>
                </li>
              ))}
            </ul>
          )}
        </dd>
      </div>
      <div>
        <dt>
          <span>{t('tools.count', { n: source.toolCount })}</span>
        </dt>
        <dd className="muted">
          <span>{t('tools.listed', { time: formatTime(source.listTime, lang) })}</span>
        </dd>
      </div>
      {showAdded && (
        <div>
          <dt className="muted">
            <span>{t('tools.detail.added', { time: formatTime(source.createTime, lang) })}</span>
          </dt>
        </div>
      )}
    </dl>
  );
}

/** Refresh, and what the last one said: how many tools now, or why it failed. */
export function RefreshButton({ source }: { source: PublicToolSource }) {
  const { t } = useLang();
  const client = useQueryClient();
  const refresh = useMutation({ mutationFn: () => refreshToolSource(client, source.id) });
  return (
    <div className="tl-refresh">
      <button
        type="button"
        className="secondary"
        disabled={refresh.isPending}
        aria-label={t('tools.refreshNamed', { name: source.name })}
        onClick={() => refresh.mutate()}
      >
        <span>{refresh.isPending ? t('tools.refreshing') : t('tools.refresh')}</span>
      </button>
      {refresh.isSuccess && (
        <span role="status" className="muted">
          <span>{t('tools.refreshed', { n: refresh.data.tools.length })}</span>
        </span>
      )}
      {refresh.isError && (
        <div className="tl-failed">
          <ActionError error={refresh.error} />
          <span className="muted">{t('tools.refreshFailed')}</span>
        </div>
      )}
    </div>
  );
}
