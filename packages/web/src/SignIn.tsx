// The sign-in form of both the platform's app and the gateway's console: what
// signing in calls is the caller's (each service has its own login).
import { useState, type FormEvent } from 'react';
import { ApiError } from './api';
import { useLang } from './i18n';

export function SignIn({ title, signIn }: { title: string; signIn: (username: string, password: string) => Promise<void> }) {
  const { t } = useLang();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await signIn(username, password);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 0 ? t('error.unreachable') : (err as Error).message);
      setBusy(false);
    }
  }

  return (
    <form className="card signin" onSubmit={submit}>
      <h1>{title}</h1>
      <label>
        <span>{t('signin.username')}</span>
        <input name="username" autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} required />
      </label>
      <label>
        <span>{t('signin.password')}</span>
        <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
      </label>
      {error && (
        <p role="alert" className="error">
          <span>{error}</span>
        </p>
      )}
      <button type="submit" disabled={busy}>
        <span>{busy ? t('signin.busy') : t('signin.submit')}</span>
      </button>
    </form>
  );
}
