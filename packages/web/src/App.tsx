// The signed-in shell: header, navigation and one route per area, each area
// loaded on first visit and inside its own error boundary.
import { lazy, Suspense } from 'react';
import { Redirect, Route, Switch } from 'wouter';
import { api, setCsrfToken, type PublicUser } from './api';
import { useLang } from './i18n';
import { SetupChecklist } from './settings/SetupChecklist';
import { Shell, SignInGate, useSignedIn } from './Shell';
import { Boundary, Loading, NotFound } from './ui';

const DatasetRoutes = lazy(() => import('./datasets/routes'));
const AppRoutes = lazy(() => import('./apps/routes'));
const ChatRoutes = lazy(() => import('./chat/routes'));
const KeysPage = lazy(() => import('./settings/KeysPage'));
const ModelsPage = lazy(() => import('./settings/ModelsPage'));
const TeamPage = lazy(() => import('./settings/TeamPage'));

export function App() {
  const { t } = useLang();
  const session = useSignedIn(async () => {
    const r = await api<{ user: PublicUser; csrfToken: string }>('/api/auth/me');
    setCsrfToken(r.csrfToken);
    return r.user;
  });

  async function signOut() {
    await api('/api/auth/logout', { method: 'POST' }).catch(() => {});
    setCsrfToken('');
    session.setUser(null);
  }

  async function signIn(username: string, password: string) {
    const r = await api<{ user: PublicUser; csrfToken: string }>('/api/auth/login', { json: { username, password } });
    setCsrfToken(r.csrfToken);
    session.setUser(r.user);
  }

  return (
    <SignInGate session={session} unreachable={t('error.unreachable')} title={t('signin.title')} signIn={signIn}>
      {(user) => <Pages user={user} onSignOut={signOut} />}
    </SignInGate>
  );
}

/** The signed-in app: the navigation and one route per area. */
function Pages({ user, onSignOut }: { user: PublicUser; onSignOut: () => void }) {
  const { t } = useLang();
  const nav = [
    { href: '/datasets', label: t('nav.datasets') },
    { href: '/apps', label: t('nav.apps') },
    { href: '/keys', label: t('nav.keys') },
    { href: '/models', label: t('nav.models') },
    ...(user.role === 'root' ? [{ href: '/team', label: t('nav.team') }] : []),
  ];
  return (
    <Shell title={t('app.title')} nav={nav} username={user.username} onSignOut={onSignOut}>
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
              <NotFound />
            </Route>
          </Switch>
        </Suspense>
      </Boundary>
    </Shell>
  );
}
