// The gateway's console: sign-in (the admin API's, with a cookie), then its
// pages in the shared shell, each loaded on first visit inside its own error
// boundary. Administrators see every page; a plain user manages only their
// own tokens, and redeems top-up codes there (the admin API scopes what each
// may see).
import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense } from 'react';
import { Redirect, Route, Switch } from 'wouter';
import { useLang, type MessageKey } from '../i18n';
import { Shell, SignInGate, useSignedIn } from '../Shell';
import { Boundary, Loading, NotFound } from '../ui';
import { isAdmin, me, signIn, signOut, type GatewayUser } from './gateway-api';

const pages = {
  dashboard: lazy(() => import('./dashboard/DashboardPage')),
  channels: lazy(() => import('./channels/ChannelsPage')),
  users: lazy(() => import('./users/UsersPage')),
  tokens: lazy(() => import('./tokens/TokensPage')),
  logs: lazy(() => import('./logs/LogsPage')),
  prices: lazy(() => import('./prices/PricesPage')),
  redemptions: lazy(() => import('./redemptions/RedemptionsPage')),
  groups: lazy(() => import('./groups/GroupsPage')),
};
type PageName = keyof typeof pages;
const ADMIN_PAGES: PageName[] = ['dashboard', 'channels', 'users', 'tokens', 'redemptions', 'logs', 'prices', 'groups'];
const USER_PAGES: PageName[] = ['tokens'];

export function ConsoleApp() {
  const { t } = useLang();
  const queries = useQueryClient();
  const session = useSignedIn(me);
  const leave = async () => {
    await signOut();
    // The next user to sign in must not see this one's answers.
    queries.clear();
    session.setUser(null);
  };
  return (
    <SignInGate
      session={session}
      unreachable={t('console.unreachable')}
      title={t('console.signinTitle')}
      signIn={async (username, password) => session.setUser(await signIn(username, password))}
    >
      {(user) => <Pages user={user} onSignOut={leave} />}
    </SignInGate>
  );
}

function Pages({ user, onSignOut }: { user: GatewayUser; onSignOut: () => void }) {
  const { t } = useLang();
  const shown = isAdmin(user) ? ADMIN_PAGES : USER_PAGES;
  const nav = shown.map((name) => ({ href: `/${name}`, label: t(`console.nav.${name}` as MessageKey) }));
  return (
    <Shell wide title={t('console.title')} nav={nav} username={user.username} onSignOut={onSignOut}>
      <Boundary>
        <Suspense fallback={<Loading />}>
          <Switch>
            <Route path="/">
              <Redirect to={`/${shown[0]}`} replace />
            </Route>
            {shown.map((name) => {
              const Page = pages[name];
              return (
                <Route key={name} path={`/${name}`} nest>
                  <Page me={user} />
                </Route>
              );
            })}
            <Route>
              <NotFound />
            </Route>
          </Switch>
        </Suspense>
      </Boundary>
    </Shell>
  );
}
