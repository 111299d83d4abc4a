// Vector and rerank models through the gateway: an embeddings request, its
// dimension against the knowledge bases already on the model, and the vector
// norm (kbchat's scores are cosines of unit vectors: others are meaningless).
import type { Check, Found } from './check.js';
import { fail, ok, warn } from './check.js';
import { errorText, request, withId } from './http.js';
import { gatewayRemedy } from './remedies.js';

/** How far from 1 a norm may be and still count as normalised (float32 rounding, providers' own). */
const NORM_TOLERANCE = 0.01;

export async function gatewayEmbeddings(f: Found, model: string): Promise<Check[]> {
  const a = await request(`${f.opts.gatewayUrl}/v1/embeddings`, {
    token: f.opts.platformToken,
    body: { model, input: ['kbchat doctor checks this model', 'a second, different text'] },
    timeoutMs: f.opts.timeoutMs,
  });
  if (a.status !== 200) return [fail('embeddings', withId(`${a.status}: ${errorText(a)}`, a.requestId), gatewayRemedy(a, model), model)];
  const vectors = (a.json?.data ?? []).map((d: { embedding?: unknown }) => d.embedding).filter(Array.isArray) as number[][];
  if (vectors.length !== 2 || !vectors[0]!.length)
    return [
      fail(
        'embeddings',
        withId(`the answer holds ${vectors.length} float vectors for 2 inputs`, a.requestId),
        'the upstream answers in a shape kbchat does not read: check the channel type',
        model,
      ),
    ];
  const dims = vectors[0]!.length;
  const onModel = (f.datasets ?? []).filter((d) => d.vectorModel === model && d.vectorDimensions !== null);
  const other = onModel.filter((d) => d.vectorDimensions !== dims);
  const checks: Check[] = [];
  if (other.length) {
    const named = other.map((d) => `"${d.name}" (${d.vectorDimensions})`).join(', ');
    checks.push(
      fail(
        'embeddings',
        withId(`${dims} dimensions, but knowledge bases on it hold vectors of another size: ${named}`, a.requestId),
        "the model behind this name has changed: restore it (the channel's model_mapping), or re-import those knowledge bases",
        model,
      ),
    );
  } else {
    checks.push(
      ok('embeddings', withId(`${dims} dimensions${onModel.length ? `, as its ${onModel.length} indexed knowledge bases` : ''}`, a.requestId), model),
    );
  }
  const norms = vectors.map((v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0)));
  const worst = norms.reduce((w, n) => (Math.abs(n - 1) > Math.abs(w - 1) ? n : w), 1);
  if (Math.abs(worst - 1) <= NORM_TOLERANCE) checks.push(ok('vector norm', `${worst.toFixed(3)}: normalised`, model));
  else {
    checks.push(
      warn(
        'vector norm',
        `${worst.toFixed(3)}${worst > 1 ? ', above 1' : ''}: the model does not normalise its vectors, and its scores are meaningless (the platform refuses such vectors)`,
        'use an embedding model that returns unit-length vectors (most providers do; some have an option for it in defaultConfig)',
        model,
      ),
    );
  }
  return checks;
}

export async function gatewayRerank(f: Found, model: string): Promise<Check> {
  const a = await request(`${f.opts.gatewayUrl}/v1/rerank`, {
    token: f.opts.platformToken,
    body: { model, query: 'kbchat doctor', documents: ['kbchat doctor checks models', 'something else entirely'] },
    timeoutMs: f.opts.timeoutMs,
  });
  if (a.status !== 200) return fail('rerank', withId(`${a.status}: ${errorText(a)}`, a.requestId), gatewayRemedy(a, model), model);
  const results = a.json?.results ?? a.json?.data;
  if (!Array.isArray(results) || results.length !== 2)
    return fail(
      'rerank',
      withId('the answer holds no result per document', a.requestId),
      'the upstream answers in a shape kbchat does not read: check the channel type',
      model,
    );
  return ok('rerank', withId(`ranked 2 documents in ${a.ms} ms`, a.requestId), model);
}
