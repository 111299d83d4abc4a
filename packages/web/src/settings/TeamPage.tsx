// Root manages its team: members with a username and an initial password;
// removing one ends their sessions.
import type { NewMemberBody } from '@kbchat/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { DeleteButton } from '../actions';
import { api, withQuery, type PublicUser } from '../api';
import { useLang } from '../i18n';
import { Boundary, formatTime, Loading, Table } from '../ui';

const MEMBERS = ['team', 'members'];

export default function TeamPage({ user }: { user: PublicUser }) {
  const { t } = useLang();
  if (user.role !== 'root')
    return (
      <p className="notice warn">
        <span>{t('team.rootOnly')}</span>
      </p>
    );
  return (
    <section className="stack">
      <h1>{t('team.title')}</h1>
      <Boundary>
        <AddMember />
      </Boundary>
      <Boundary>
        <Members me={user} />
      </Boundary>
    </section>
  );
}

function AddMember() {
  const { t } = useLang();
  const client = useQueryClient();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const add = useMutation({
    mutationFn: (json: NewMemberBody) => api('/api/team/members', { json }),
    onSuccess: () => {
      setUsername('');
      setPassword('');
      void client.invalidateQueries({ queryKey: MEMBERS });
    },
  });
  const error = add.error?.message ?? '';
  function submit(e: FormEvent) {
    e.preventDefault();
    add.mutate({ username, password });
  }
  return (
    <form className="card stack" onSubmit={submit}>
      <div className="row">
        <label className="grow">
          <span>{t('team.username')}</span>
          <input value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="off" required />
        </label>
        <label className="grow">
          <span>{t('team.password')}</span>
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" required />
        </label>
      </div>
      {error && (
        <p role="alert" className="error">
          <span>{error}</span>
        </p>
      )}
      <div>
        <button type="submit">
          <span>{t('team.add')}</span>
        </button>
      </div>
    </form>
  );
}

function Members({ me }: { me: PublicUser }) {
  const { t, lang } = useLang();
  const client = useQueryClient();
  const { data } = useQuery({ queryKey: MEMBERS, queryFn: ({ signal }) => api<PublicUser[]>('/api/team/members', { signal }) });
  if (!data) return <Loading />;
  const remove = async (u: PublicUser) => {
    await api(withQuery('/api/team/members', { id: u.id }), { method: 'DELETE' });
    await client.invalidateQueries({ queryKey: MEMBERS });
  };
  return (
    <Table
      rows={data}
      rowKey={(u) => u.id}
      columns={[
        {
          header: t('team.username'),
          cell: (u) => (
            <>
              <span>{u.username}</span> {u.id === me.id && <span className="muted">{t('team.you')}</span>}
            </>
          ),
        },
        { header: t('team.role'), cell: (u) => <span>{u.role}</span> },
        { header: t('team.created'), cell: (u) => <span>{formatTime(u.createTime, lang)}</span> },
        { header: null, cell: (u) => u.role !== 'root' && <DeleteButton name={u.username} onDelete={() => remove(u)} /> },
      ]}
    />
  );
}
