// The signed-in shell: header, navigation and one route per area, each area
// loaded on first visit and inside its own error boundary.
import { lazy, Suspense, useEffect, useState } from 'react';
import { Redirect, Route, Switch } from 'wouter';
import { api, ApiError, setCsrfToken, type PublicUser } from './api';
import { useLang } from './i18n';
import { SetupChecklist } from './settings/SetupChecklist';
import { Shell, SignedOut } from './Shell';
import { SignIn } from './SignIn';
import { Boundary, Loading } from './ui';

const DatasetRoutes = lazy(() => import('./datasets/routes'));
const AppRoutes = lazy(() => import('./apps/routes'));
const ChatRoutes = lazy(() => import('./chat/routes'));
const KeysPage = lazy(() => import('./settings/KeysPage'));
const ModelsPage = lazy(() => import('./settings/ModelsPage'));
const TeamPage = lazy(() => import('./settings/TeamPage'));

export function App() {
  const { t } = useLang();
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

  async function signIn(username: string, password: string) {
    const r = await api<{ user: PublicUser; csrfToken: string }>('/api/auth/login', { json: { username, password } });
    setCsrfToken(r.csrfToken);
    setUser(r.user);
  }

  if (unreachable)
    return (
      <p role="alert" className="error">
        <span>{t('error.unreachable')}</span>
      </p>
    );
  if (user === undefined) return null;
  if (user === null)
    return (
      <SignedOut>
        <Boundary>
          <SignIn title={t('signin.title')} signIn={signIn} />
        </Boundary>
      </SignedOut>
    );
  const nav = [
    { href: '/datasets', label: t('nav.datasets') },
    { href: '/apps', label: t('nav.apps') },
    { href: '/keys', label: t('nav.keys') },
    { href: '/models', label: t('nav.models') },
    ...(user.role === 'root' ? [{ href: '/team', label: t('nav.team') }] : []),
  ];
  return (
    <Shell title={t('app.title')} nav={nav} username={user.username} onSignOut={signOut}>
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
    </Shell>
  );
}
