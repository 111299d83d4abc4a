// The platform's API as the benches that run kbchat use it: JSON calls with
// a key, file uploads, and waiting for a dataset's indexing.

/** api(path) GETs, api(path, json) POSTs; resolves to the answer's `data`, throws on any status but 200. */
export function client(url, key) {
  return async (path, json) => {
    const res = await fetch(`${url}${path}`, {
      method: json === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    return body.data;
  };
}

/** Uploads a Markdown file into a dataset as a collection; resolves to its id. */
export async function uploadFile(url, key, datasetId, name, text) {
  const form = new FormData();
  form.append('data', JSON.stringify({ datasetId, name }));
  form.append('file', new Blob([text], { type: 'text/markdown' }), name);
  const res = await fetch(`${url}/api/core/dataset/collection/create/localFile`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`upload ${name}: ${res.status} ${JSON.stringify(body)}`);
  return body.data.collectionId;
}

/** The dataset's trainingDetail; throws when an item failed. */
export async function trainingProgress(api, datasetId) {
  const p = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
  if (p.failed) throw new Error(`indexing failed: ${p.lastError}`);
  return p;
}

/** Resolves to the dataset's trainingDetail once every queued item is done. */
export async function waitIndexed(api, datasetId, pollMs = 500) {
  for (;;) {
    const p = await trainingProgress(api, datasetId);
    if (p.total > 0 && p.done === p.total) return p;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
