// The gateway's console: sign-in (the admin API's, with a cookie), then its
// pages in the shared shell, each loaded on first visit inside its own error
// boundary. Only administrators reach the pages; anyone else is told so.
import { lazy, Suspense } from 'react';
import { Redirect, Route, Switch } from 'wouter';
import { useLang } from '../i18n';
import { Shell, SignedOut, SignInGate, useSignedIn } from '../Shell';
import { Boundary, Loading, NotFound } from '../ui';
import { me, signIn, signOut, type GatewayUser } from './gateway-api';

const UsersPage = lazy(() => import('./UsersPage'));

export function ConsoleApp() {
  const { t } = useLang();
  const session = useSignedIn(me);
  const leave = async () => {
    await signOut();
    session.setUser(null);
  };
  return (
    <SignInGate session={session} unreachable={t('console.unreachable')} title={t('console.signinTitle')} signIn={async (username, password) => session.setUser(await signIn(username, password))}>
      {(user) => <Pages user={user} onSignOut={leave} />}
    </SignInGate>
  );
}

/** An administrator's console; anyone else is told that it is not for them. */
function Pages({ user, onSignOut }: { user: GatewayUser; onSignOut: () => void }) {
  const { t } = useLang();
  if (user.role !== 'root' && user.role !== 'admin')
    return (
      <SignedOut>
        <p role="alert" className="error">
          <span>{t('console.notAdmin', { name: user.username })}</span>
        </p>
        <button type="button" className="secondary" onClick={onSignOut}>
          <span>{t('nav.signout')}</span>
        </button>
      </SignedOut>
    );
  return (
    <Shell title={t('console.title')} nav={[{ href: '/users', label: t('console.nav.users') }]} username={user.username} onSignOut={onSignOut}>
      <Boundary>
        <Suspense fallback={<Loading />}>
          <Switch>
            <Route path="/">
              <Redirect to="/users" replace />
            </Route>
            <Route path="/users">
              <UsersPage me={user} />
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
