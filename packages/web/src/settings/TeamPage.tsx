import type { PublicUser } from '../api';

export default function TeamPage({ user }: { user: PublicUser }) {
  return <p>{user.username}</p>;
}
