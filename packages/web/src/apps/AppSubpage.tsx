// A page of one application besides its settings (share links, chat log,
// annotations, figures): the breadcrumb back to it, links to its other
// pages, the page's title, and the page itself.
import type { ReactNode } from 'react';
import { Link, useRoute } from 'wouter';
import { useLang, type MessageKey } from '../i18n';
import { Loading } from '../ui';
import { useAppDetail } from './queries';

/** An application's pages besides its settings, in the order its settings page links them. */
export const SUBPAGES: { path: string; title: MessageKey }[] = [
  { path: 'share', title: 'share.title' },
  { path: 'logs', title: 'logs.title' },
  { path: 'annotations', title: 'annotations.title' },
  { path: 'stats', title: 'stats.title' },
];

export function AppSubpage({ appId, title, children }: { appId: string; title: string; children: ReactNode }) {
  const { t } = useLang();
  const { data: app } = useAppDetail(appId);
  const [, params] = useRoute<{ appId: string; page: string }>('/:appId/:page');
  if (!app) return <Loading />;
  const base = `/${encodeURIComponent(appId)}`;
  return (
    <section className="stack">
      <nav className="ap-breadcrumb" aria-label={t('apps.breadcrumb')}>
        <Link href="/">
          <span>{t('apps.title')}</span>
        </Link>
        <span aria-hidden="true">/</span>
        <Link href={base}>
          <span>{app.name}</span>
        </Link>
      </nav>
      <div className="ap-head">
        <h1>{title}</h1>
        <nav className="ap-subpages" aria-label={t('apps.subpages')}>
          {SUBPAGES.filter((p) => p.path !== params?.page).map((p) => (
            <Link key={p.path} href={`${base}/${p.path}`}>
              <span>{t(p.title)}</span>
            </Link>
          ))}
        </nav>
      </div>
      {children}
    </section>
  );
}
