export default function ModelsPage() {
  return <p>not built yet</p>;
}
