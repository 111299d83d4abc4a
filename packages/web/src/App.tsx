import { useEffect, useState } from 'react';
import { api, ApiError, setCsrfToken, type PublicUser } from './api';
import { Datasets } from './Datasets';
import { ErrorBoundary } from './ErrorBoundary';
import { setLang, useLang } from './i18n';
import { SignIn } from './SignIn';

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

  if (unreachable) return <p role="alert" className="error">{t('error.unreachable')}</p>;
  if (user === undefined) return null;
  if (user === null) {
    return (
      <main className="centered">
        <ErrorBoundary title={t('error.title')} retry={t('error.retry')}>
          <SignIn onSignedIn={setUser} />
        </ErrorBoundary>
        {langButton}
      </main>
    );
  }
  return (
    <div className="shell">
      <header>
        <strong>{t('app.title')}</strong>
        <nav>
          <span>{t('nav.datasets')}</span>
        </nav>
        <span className="muted">{user.username}</span>
        {langButton}
        <button type="button" onClick={signOut}>
          <span>{t('nav.signout')}</span>
        </button>
      </header>
      <main>
        <h1>{t('nav.datasets')}</h1>
        <ErrorBoundary title={t('error.title')} retry={t('error.retry')}>
          <Datasets />
        </ErrorBoundary>
      </main>
    </div>
  );
}
