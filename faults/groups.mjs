// Price groups on one `kbchat gateway` process (its embedded store): two users,
// one in `default` (ratio 1) and one in `half` (ratio 0.5), send the same 20
// requests at once (plain and streamed); each of the half user's log rows costs
// exactly half of the same request's, and so does what left each balance.
// Then the process is stopped and started again on the same data: the group
// and its ratio are still in force.
import { api, cleanEnv, freePort, sleep, startKbchat, tempDir } from './lib.mjs';

const ROOT_TOKEN = 'sk-faults-groups-token-0123456789abcdef';
const KASE = 'groups: half price is exactly half';
const BALANCE_MICROS = 5_000_000;

export async function groupsCase(report, sim) {
  const port = await freePort();
  const data = tempDir('gw-groups');
  const env = cleanEnv({
    DATA_DIR: data.dir,
    GATEWAY_HOST: '127.0.0.1',
    INITIAL_ROOT_TOKEN: ROOT_TOKEN,
    SIM_API_KEY: sim.key,
    SIM_BASE_URL: `${sim.url}/v1`,
    SIM_MODELS: 'sim-chat',
  });
  let gw = await startKbchat('groups', ['gateway', '--port', String(port)], env);
  const url = `http://127.0.0.1:${port}`;
  const admin = (path, init = {}) => api(url, path, { token: ROOT_TOKEN, ...init });

  try {
    // 2 units per 1M input tokens and 4 per 1M output: every cost an even number of micro-units.
    const price = await admin('/api/prices/sim-chat', { method: 'PUT', json: { input_price: 2, output_price: 4 } });
    const group = await admin('/api/groups/half', { method: 'PUT', json: { ratio: 0.5, description: 'faults' } });
    report.check(KASE, 'price and group set through the admin API', price.status === 200 && group.status === 200, `HTTP ${price.status}, ${group.status}`);

    const full = await userWithToken(admin, 'full-price', 'default');
    const half = await userWithToken(admin, 'half-price', 'half');
    const ask = (who, i) =>
      api(url, '/v1/chat/completions', {
        method: 'POST',
        token: who.key,
        json: { model: 'sim-chat', stream: i % 2 === 1, messages: [{ role: 'user', content: `question ${i}: ${'more words '.repeat(i)}` }] },
      });

    // The same 20 requests from each user, all 40 at once.
    const pairs = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const [f, h] = await Promise.all([ask(full, i), ask(half, i)]);
        return { full: f, half: h };
      }),
    );
    const ok = pairs.filter((p) => p.full.status === 200 && p.half.status === 200).length;
    report.check(KASE, '20 requests from each user answered', ok === 20, `${ok} of 20 pairs`);

    const costs = await Promise.all(pairs.map(async (p) => ({ full: await costOf(admin, p.full.requestId), half: await costOf(admin, p.half.requestId) })));
    const exact = costs.filter((c) => c.full > 0 && c.half * 2 === c.full).length;
    const sumFull = costs.reduce((s, c) => s + c.full, 0);
    const sumHalf = costs.reduce((s, c) => s + c.half, 0);
    report.check(
      KASE,
      "each half-price log row costs exactly half of the same request's",
      exact === 20,
      `${exact} of 20 (${sumFull} and ${sumHalf} micro-units in all)`,
    );

    const spentFull = BALANCE_MICROS - (await balanceOf(admin, full.id));
    const spentHalf = BALANCE_MICROS - (await balanceOf(admin, half.id));
    report.check(
      KASE,
      'balances: each spent what its log rows cost, half exactly half',
      spentFull === sumFull && spentHalf === sumHalf && spentHalf * 2 === spentFull,
      `spent ${spentFull} and ${spentHalf} micro-units`,
    );

    // Stopped and started again on the same data: the group and its ratio are still in force.
    const code = await gw.stop();
    gw = await startKbchat('groups again', ['gateway', '--port', String(port)], env);
    const after = { full: await ask(full, 3), half: await ask(half, 3) };
    const again = { full: await costOf(admin, after.full.requestId), half: await costOf(admin, after.half.requestId) };
    report.check(
      KASE,
      'after a restart, still half',
      after.half.status === 200 && again.full > 0 && again.half * 2 === again.full && again.full === costs[3].full,
      `exit ${code}; ${again.full} and ${again.half} micro-units`,
    );
  } finally {
    await gw.stop();
    data.remove();
  }
}

async function userWithToken(admin, username, group) {
  const user = await admin('/api/users', { method: 'POST', json: { username, password: 'faults-password', group, balance: BALANCE_MICROS / 1e6 } });
  if (user.status !== 201) throw new Error(`user ${username}: HTTP ${user.status} ${JSON.stringify(user.body)}`);
  const token = await admin('/api/tokens', { method: 'POST', json: { user_id: user.body.id, name: username } });
  if (token.status !== 201) throw new Error(`token of ${username}: HTTP ${token.status} ${JSON.stringify(token.body)}`);
  return { id: user.body.id, key: token.body.key };
}

/** A request's logged cost in micro-units (the log is written in batches: asked again until its row is there). */
async function costOf(admin, requestId) {
  for (let i = 0; i < 50; i++) {
    const r = await admin(`/api/logs/${requestId}`);
    if (r.status === 200) return r.body.cost_micros;
    await sleep(100);
  }
  throw new Error(`no log row for ${requestId}`);
}

async function balanceOf(admin, id) {
  return (await admin(`/api/users/${id}`)).body.balance_micros;
}
