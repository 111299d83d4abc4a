// Keeps local-embed busy from its own process (so that parsing the answers
// does not slow the process that measures the relay): `concurrency` loops of
// `batch`-input requests for `ms`; prints the inputs per second it got. Asks
// for base64 vectors, as the official openai client and the platform do.
const [url, token, batch, concurrency, ms] = process.argv.slice(2);
const size = Number(batch);
const end = performance.now() + Number(ms);
const started = performance.now();
let n = 0;
let failed = 0;
await Promise.all(
  Array.from({ length: Number(concurrency) }, async (_, w) => {
    for (let k = 0; performance.now() < end; k++) {
      const input = Array.from({ length: size }, (_, i) => `Background indexing sentence ${w}-${k}-${i} about rivers, budgets and museums.`);
      const res = await fetch(`${url}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ model: 'local-embed', input, encoding_format: 'base64' }),
      });
      const body = await res.json();
      if (res.status === 200 && body.data?.length === size) n += size;
      else failed++;
    }
  }),
);
console.log(JSON.stringify({ perSecond: n / ((performance.now() - started) / 1000), failed }));
