// The public chat page of a share link (/chat/share?shareId=), no sign-in.
export function SharePage() {
  return <p>share page: not built yet</p>;
}
