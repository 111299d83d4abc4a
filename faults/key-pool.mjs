// A channel whose key holds three keys, one of them wrong for the upstream,
// on one `kbchat gateway` on its embedded store: a burst and a run of
// requests all succeed, the wrong key ends disabled with its reason and the
// other two stay enabled; after kill -9 and a start on the same data dir the
// key is still disabled, and requests still succeed.
import { api, cleanEnv, freePort, startKbchat, tempDir } from './lib.mjs';

const ROOT_TOKEN = 'sk-faults-key-pool-token-0123456789abcdef';
/** A second key the simulator takes besides the suite's own (run.mjs passes it as `keys`). */
export const POOL_GOOD_KEY = 'sk-faults-pool-good-key-01234567good';
const WRONG_KEY = 'sk-faults-pool-wrong-key-0123456wxyz';
const KASE = 'key pool with a wrong key';

export async function keyPoolCase(report, sim) {
  const port = await freePort();
  const data = tempDir('gw-key-pool');
  const env = cleanEnv({ DATA_DIR: data.dir, GATEWAY_HOST: '127.0.0.1', INITIAL_ROOT_TOKEN: ROOT_TOKEN });
  const args = ['gateway', '--port', String(port)];
  let gateway = await startKbchat('key-pool', args, env);
  const url = `http://127.0.0.1:${port}`;
  try {
    const made = await api(url, '/api/channels', {
      method: 'POST',
      token: ROOT_TOKEN,
      json: { name: 'pooled', type: 'openai', base_url: `${sim.url}/v1`, key: [sim.key, WRONG_KEY, POOL_GOOD_KEY].join('\n'), models: ['sim-chat'] },
    });
    report.check(KASE, 'a channel of three keys made through the admin API', made.status === 201 && made.body.keys?.length === 3, `HTTP ${made.status}`);
    const id = made.body.id;
    const ask = (i) =>
      api(url, '/v1/chat/completions', {
        method: 'POST',
        token: ROOT_TOKEN,
        json: { model: 'sim-chat', messages: [{ role: 'user', content: `question ${i}` }] },
      });
    const answered = (rs) => rs.filter((r) => r.status === 200 && /^Echo: question/.test(r.body?.choices?.[0]?.message?.content ?? '')).length;

    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => ask(i)));
    const run = [];
    for (let i = 0; i < 30; i++) run.push(await ask(100 + i));
    const all = [...burst, ...run];
    report.check(
      KASE,
      'a burst of 30 and a run of 30: every request answered',
      answered(all) === 60,
      `${answered(all)} of 60 (statuses ${[...new Set(all.map((r) => r.status))].join(', ')})`,
    );

    const keysNow = async () => (await api(url, `/api/channels/${id}`, { token: ROOT_TOKEN })).body.keys ?? [];
    const keys = await keysNow();
    const states = keys.map((k) => k.status).join(', ');
    report.check(KASE, 'the wrong key disabled, the other two enabled', states === 'enabled, disabled, enabled', states);
    report.check(KASE, 'its reason: the upstream refused it', /^401: Incorrect API key provided/.test(keys[1]?.reason ?? ''), keys[1]?.reason ?? 'none');
    const whole = JSON.stringify(keys).includes(WRONG_KEY) || JSON.stringify(keys).includes(sim.key);
    report.check(
      KASE,
      'keys shown by their hints only',
      !whole && keys.every((k) => k.hint === '***' || /^.{3}\.\.\..{4}$/.test(k.hint)),
      keys.map((k) => k.hint).join(' '),
    );

    await gateway.kill9();
    gateway = await startKbchat('key-pool (again)', args, env);
    const after = await keysNow();
    const again = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(200 + i)));
    report.check(
      KASE,
      'after kill -9 and a start: still disabled, requests answered',
      after.map((k) => k.status).join(', ') === 'enabled, disabled, enabled' && answered(again) === 10,
      `${after.map((k) => k.status).join(', ')}; ${answered(again)} of 10`,
    );
  } finally {
    await gateway.stop();
    data.remove();
  }
}
