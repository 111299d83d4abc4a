export default function KeysPage() {
  return <p>not built yet</p>;
}
