// The signed-in shell: header, navigation and one route per area, each area
// loaded on first visit and inside its own error boundary.
import type { SignInBody } from '@kbchat/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, type ReactNode } from 'react';
import { Redirect, Route, Switch, useLocation } from 'wouter';
import { api, setCsrfToken, type PublicUser, type SessionInfo, type SignInAnswer } from './api';
import { useLang } from './i18n';
import { SetupChecklist } from './settings/SetupChecklist';
import { Shell, SignInGate, useSignedIn } from './Shell';
import { Boundary, Loading, NotFound } from './ui';

const DatasetRoutes = lazy(() => import('./datasets/routes'));
const AppRoutes = lazy(() => import('./apps/routes'));
const ToolRoutes = lazy(() => import('./tools/routes'));
const ChatRoutes = lazy(() => import('./chat/routes'));
const KeysPage = lazy(() => import('./settings/KeysPage'));
const ModelsPage = lazy(() => import('./settings/ModelsPage'));
const TeamPage = lazy(() => import('./settings/TeamPage'));

export function App() {
  const { t } = useLang();
  const queries = useQueryClient();
  const session = useSignedIn(async () => {
    const r = await api<SessionInfo>('/api/auth/me');
    setCsrfToken(r.csrfToken);
    return r.user;
  });

  async function signOut() {
    await api('/api/auth/logout', { method: 'POST' }).catch(() => {});
    setCsrfToken('');
    // The next user to sign in must not see this one's answers.
    queries.clear();
    session.setUser(null);
  }

  async function signIn(username: string, password: string) {
    const r = await api<SignInAnswer>('/api/auth/login', { json: { username, password } satisfies SignInBody });
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
    { href: '/tools', label: t('nav.tools') },
    { href: '/keys', label: t('nav.keys') },
    { href: '/models', label: t('nav.models') },
    ...(user.role === 'root' ? [{ href: '/team', label: t('nav.team') }] : []),
  ];
  return (
    <Shell title={t('app.title')} nav={nav} username={user.username} onSignOut={onSignOut}>
      <Boundary>
        <SetupChecklist />
      </Boundary>
      <Switch>
        <Route path="/">
          <Redirect to="/datasets" replace />
        </Route>
        <Route path="/datasets" nest>
          <Page>
            <DatasetRoutes />
          </Page>
        </Route>
        <Route path="/apps" nest>
          <Page>
            <AppRoutes />
          </Page>
        </Route>
        <Route path="/tools" nest>
          <Page>
            <ToolRoutes />
          </Page>
        </Route>
        <Route path="/chat" nest>
          <Page>
            <ChatRoutes />
          </Page>
        </Route>
        <Route path="/keys">
          <Page>
            <KeysPage />
          </Page>
        </Route>
        <Route path="/models">
          <Page>
            <ModelsPage />
          </Page>
        </Route>
        <Route path="/team">
          <Page>
            <TeamPage user={user} />
          </Page>
        </Route>
        <Route>
          <NotFound />
        </Route>
      </Switch>
    </Shell>
  );
}

/**
 * One route's page inside its own boundary, loaded on first visit. The
 * boundary forgets its error when the address changes, so that leaving a
 * broken or missing page shows the next one.
 */
function Page({ children }: { children: ReactNode }) {
  const [location] = useLocation();
  return (
    <Boundary resetKey={location}>
      <Suspense fallback={<Loading />}>{children}</Suspense>
    </Boundary>
  );
}
