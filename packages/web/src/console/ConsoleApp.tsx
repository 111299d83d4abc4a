// The gateway's console: sign-in (the admin API's, with a cookie), then its
// pages in the shared shell, each loaded on first visit inside its own error
// boundary. Only administrators reach the pages; anyone else is told so.
import { lazy, Suspense } from 'react';
import { Redirect, Route, Switch } from 'wouter';
import { useLang } from '../i18n';
import { Shell, SignedOut, useSignedIn } from '../Shell';
import { SignIn } from '../SignIn';
import { Boundary, Loading, NotFound } from '../ui';
import { me, signIn, signOut } from './gateway-api';

const UsersPage = lazy(() => import('./UsersPage'));

export function ConsoleApp() {
  const { t } = useLang();
  const { user, setUser, unreachable } = useSignedIn(me);

  const leave = async () => {
    await signOut();
    setUser(null);
  };

  if (unreachable)
    return (
      <p role="alert" className="error">
        <span>{t('console.unreachable')}</span>
      </p>
    );
  if (user === undefined) return null;
  if (user === null)
    return (
      <SignedOut>
        <Boundary>
          <SignIn title={t('console.signinTitle')} signIn={async (username, password) => setUser(await signIn(username, password))} />
        </Boundary>
      </SignedOut>
    );
  if (user.role !== 'root' && user.role !== 'admin')
    return (
      <SignedOut>
        <p role="alert" className="error">
          <span>{t('console.notAdmin', { name: user.username })}</span>
        </p>
        <button type="button" className="secondary" onClick={leave}>
          <span>{t('nav.signout')}</span>
        </button>
      </SignedOut>
    );
  return (
    <Shell title={t('console.title')} nav={[{ href: '/users', label: t('console.nav.users') }]} username={user.username} onSignOut={leave}>
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
