// A page of one application besides its settings (share links, chat log): the
// breadcrumb back to it, the page's title, and the page itself.
import type { ReactNode } from 'react';
import { Link } from 'wouter';
import { useAppDetail } from './queries';
import { useLang } from '../i18n';
import { Loading } from '../ui';

export function AppSubpage({ appId, title, children }: { appId: string; title: string; children: ReactNode }) {
  const { t } = useLang();
  const { data: app } = useAppDetail(appId);
  if (!app) return <Loading />;
  return (
    <section className="stack">
      <nav className="ap-breadcrumb" aria-label={t('apps.breadcrumb')}>
        <Link href="/">
          <span>{t('apps.title')}</span>
        </Link>
        <span aria-hidden="true">/</span>
        <Link href={`/${encodeURIComponent(appId)}`}>
          <span>{app.name}</span>
        </Link>
      </nav>
      <h1>{title}</h1>
      {children}
    </section>
  );
}
