// What the platform's app and the gateway's console share around their pages:
// the header with its navigation, the signed-in user, the language switch and
// sign-out; and the centred page a signed-out visitor sees.
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import type { ApiError } from './api';
import { setLang, useLang } from './i18n';
import { SignIn } from './SignIn';
import { Boundary } from './ui';

/**
 * Who is signed in, asked once: `user` is undefined while asking and null for
 * nobody; `unreachable` when the service did not answer at all.
 */
export function useSignedIn<U>(me: () => Promise<U>) {
  const [user, setUser] = useState<U | null | undefined>(undefined);
  const [unreachable, setUnreachable] = useState(false);
  useEffect(() => {
    me().then(setUser, (err: ApiError) => (err.status === 0 ? setUnreachable(true) : setUser(null)));
    // Asked once, when the app starts.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return { user, setUser, unreachable };
}

export function LangButton() {
  const { lang, t } = useLang();
  return (
    <button type="button" className="link" onClick={() => setLang(lang === 'en' ? 'zh' : 'en')}>
      <span>{t('lang.switch')}</span>
    </button>
  );
}

export interface NavEntry {
  href: string;
  label: string;
}

/** The header and main area of a signed-in app; `wide` for pages of wide tables (the gateway's console). */
export function Shell({
  title,
  nav,
  username,
  onSignOut,
  wide,
  children,
}: {
  title: string;
  nav: NavEntry[];
  username: string;
  onSignOut: () => void;
  wide?: boolean;
  children: ReactNode;
}) {
  const { t } = useLang();
  return (
    <div className={wide ? 'shell wide' : 'shell'}>
      <header>
        <strong>{title}</strong>
        <nav aria-label="main">
          {nav.map((n) => (
            <NavLink key={n.href} href={n.href}>
              {n.label}
            </NavLink>
          ))}
        </nav>
        <span className="muted">
          <span>{username}</span>
        </span>
        <LangButton />
        <button type="button" className="secondary" onClick={onSignOut}>
          <span>{t('nav.signout')}</span>
        </button>
      </header>
      <main>{children}</main>
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

/**
 * What stands before the pages: the service's own "did not answer" message,
 * nothing while asking who is signed in, the sign-in form for nobody; the
 * pages (`children`) for a user.
 */
export function SignInGate<U>({
  session,
  unreachable,
  title,
  signIn,
  children,
}: {
  session: { user: U | null | undefined; unreachable: boolean };
  unreachable: string;
  title: string;
  signIn: (username: string, password: string) => Promise<void>;
  children: (user: U) => ReactNode;
}) {
  if (session.unreachable)
    return (
      <p role="alert" className="error">
        <span>{unreachable}</span>
      </p>
    );
  if (session.user === undefined) return null;
  if (session.user === null)
    return (
      <SignedOut>
        <Boundary>
          <SignIn title={title} signIn={signIn} />
        </Boundary>
      </SignedOut>
    );
  return <>{children(session.user)}</>;
}

/** The page of someone not signed in: the sign-in form (or a message) and the language switch. */
export function SignedOut({ children }: { children: ReactNode }) {
  return (
    <main className="centered">
      {children}
      <LangButton />
    </main>
  );
}
