// A model whose only upstream is down (nothing listens on its port), with
// sim-chat as its fallback, on one `kbchat gateway`: without the fallback the
// requests fail; with it, every one of a burst is answered by sim-chat, and
// each log row names the model that answered and the model asked for.
import { api, cleanEnv, freePort, sleep, startKbchat, tempDir } from './lib.mjs';

const ROOT_TOKEN = 'sk-faults-fallback-token-0123456789abcdef';
const KASE = 'fallback while a model is down';

export async function fallbackCase(report, sim) {
  const port = await freePort();
  // Taken and released: nothing listens there, as with a provider that is down.
  const downPort = await freePort();
  const data = tempDir('gw-fallback');
  await startKbchat(
    'fallback',
    ['gateway', '--port', String(port)],
    cleanEnv({
      DATA_DIR: data.dir,
      GATEWAY_HOST: '127.0.0.1',
      INITIAL_ROOT_TOKEN: ROOT_TOKEN,
      SIM_API_KEY: sim.key,
      SIM_BASE_URL: `${sim.url}/v1`,
      SIM_MODELS: 'sim-chat',
      DOWN_API_KEY: 'sk-faults-down',
      DOWN_BASE_URL: `http://127.0.0.1:${downPort}/v1`,
      DOWN_MODELS: 'primary-model',
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const ask = (i) =>
    api(url, '/v1/chat/completions', {
      method: 'POST',
      token: ROOT_TOKEN,
      json: { model: 'primary-model', messages: [{ role: 'user', content: `question ${i}` }] },
    });

  const before = await ask(0);
  report.check(KASE, 'without fallbacks, the down model fails', before.status >= 500, `HTTP ${before.status} ${before.body?.error?.code ?? ''}`);
  const set = await api(url, '/api/fallbacks/primary-model', { method: 'PUT', token: ROOT_TOKEN, json: { fallbacks: ['sim-chat'] } });
  report.check(KASE, 'fallbacks set through the admin API', set.status === 200, `HTTP ${set.status}`);

  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(i + 1)));
  const byFallback = answers.filter((r) => r.status === 200 && /^Echo: question/.test(r.body?.choices?.[0]?.message?.content ?? ''));
  report.check(
    KASE,
    'a burst of 20 answered by the fallback',
    byFallback.length === 20,
    `${byFallback.length} of 20 (statuses ${[...new Set(answers.map((r) => r.status))].join(', ')})`,
  );

  // The log is written in batches: give it a flush.
  await sleep(1500);
  const rows = await Promise.all(answers.slice(0, 5).map((r) => api(url, `/api/logs/${r.requestId}`, { token: ROOT_TOKEN })));
  const named = rows.filter((r) => r.body?.model === 'sim-chat' && r.body?.requested_model === 'primary-model');
  report.check(KASE, 'log rows: model sim-chat, requested primary-model', named.length === 5, `${named.length} of 5`);
}
