// The signed-in shell: header, navigation and one route per area, each area
// loaded on first visit and inside its own error boundary.
import { lazy, Suspense, useEffect, useState } from 'react';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { api, ApiError, setCsrfToken, type PublicUser } from './api';
import { setLang, useLang } from './i18n';
import { SetupChecklist } from './settings/SetupChecklist';
import { SignIn } from './SignIn';
import { Boundary, Loading } from './ui';

const DatasetRoutes = lazy(() => import('./datasets/routes'));
const AppRoutes = lazy(() => import('./apps/routes'));
const ChatRoutes = lazy(() => import('./chat/routes'));
const KeysPage = lazy(() => import('./settings/KeysPage'));
const ModelsPage = lazy(() => import('./settings/ModelsPage'));
const TeamPage = lazy(() => import('./settings/TeamPage'));

export function App() {
  const { lang, t } = useLang();
  const [user, setUser] = useState<PublicUser | null | undefined>(undefined);
  const [unreachable, setUnreachable] = useState(false);

  useEffect(() => {
    api<{ user: PublicUser; csrfToken: string }>('/api/auth/me').then(
      (r) => {
        setCsrfToken(r.csrfToken);
        setUser(r.user);
      },
      (err: ApiError) => (err.status === 0 ? setUnreachable(true) : setUser(null)),
    );
  }, []);

  async function signOut() {
    await api('/api/auth/logout', { method: 'POST' }).catch(() => {});
    setCsrfToken('');
    setUser(null);
  }

  const langButton = (
    <button type="button" className="link" onClick={() => setLang(lang === 'en' ? 'zh' : 'en')}>
      <span>{t('lang.switch')}</span>
    </button>
  );

  if (unreachable)
    return (
      <p role="alert" className="error">
        <span>{t('error.unreachable')}</span>
      </p>
    );
  if (user === undefined) return null;
  if (user === null) {
    return (
      <main className="centered">
        <Boundary>
          <SignIn onSignedIn={setUser} />
        </Boundary>
        {langButton}
      </main>
    );
  }
  return (
    <div className="shell">
      <header>
        <strong>{t('app.title')}</strong>
        <nav aria-label="main">
          <NavLink href="/datasets">{t('nav.datasets')}</NavLink>
          <NavLink href="/apps">{t('nav.apps')}</NavLink>
          <NavLink href="/keys">{t('nav.keys')}</NavLink>
          <NavLink href="/models">{t('nav.models')}</NavLink>
          {user.role === 'root' && <NavLink href="/team">{t('nav.team')}</NavLink>}
        </nav>
        <span className="muted">
          <span>{user.username}</span>
        </span>
        {langButton}
        <button type="button" className="secondary" onClick={signOut}>
          <span>{t('nav.signout')}</span>
        </button>
      </header>
      <main>
        <Boundary>
          <SetupChecklist />
        </Boundary>
        <Boundary>
          <Suspense fallback={<Loading />}>
            <Switch>
              <Route path="/">
                <Redirect to="/datasets" replace />
              </Route>
              <Route path="/datasets" nest>
                <DatasetRoutes />
              </Route>
              <Route path="/apps" nest>
                <AppRoutes />
              </Route>
              <Route path="/chat" nest>
                <ChatRoutes />
              </Route>
              <Route path="/keys">
                <KeysPage />
              </Route>
              <Route path="/models">
                <ModelsPage />
              </Route>
              <Route path="/team">
                <TeamPage user={user} />
              </Route>
              <Route>
                <p role="alert">
                  <span>{t('error.notFound')}</span>
                </p>
              </Route>
            </Switch>
          </Suspense>
        </Boundary>
      </main>
    </div>
  );
}

function NavLink({ href, children }: { href: string; children: string }) {
  const [location] = useLocation();
  const current = location === href || location.startsWith(`${href}/`);
  return (
    <Link href={href} aria-current={current ? 'page' : undefined}>
      <span>{children}</span>
    </Link>
  );
}
