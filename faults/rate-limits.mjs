// Two `kbchat gateway` processes on one MariaDB database with Redis, as an
// operator opens a gateway to many users: a burst of 60 requests split
// across both, through a token limited to 30 a minute, gets exactly 30
// answers and 30 refusals (429, rate_limit_exceeded, Retry-After); one
// top-up code redeemed on both at the same moment credits once.
import { randomBytes } from 'node:crypto';
import { api, cleanEnv, freePort, serverDatabase, sleep, startKbchat, tempDir } from './lib.mjs';

const ROOT_TOKEN = 'sk-faults-limits-token-0123456789abcdef';
const KASE = 'rate limits on MariaDB with Redis';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function gateway(name, env) {
  const port = await freePort();
  const data = tempDir(`gw-${name}`);
  await startKbchat(name, ['gateway', '--port', String(port)], cleanEnv({ ...env, DATA_DIR: data.dir }));
  return `http://127.0.0.1:${port}`;
}

async function redisAnswers() {
  const { Redis } = await import('ioredis');
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

export async function rateLimitsCase(report, sim) {
  if (!(await redisAnswers())) return report.skip(KASE, `no Redis answers at ${REDIS_URL}`);
  const db = await serverDatabase('mysql');
  if (db.skip) return report.skip(KASE, db.skip);
  try {
    const env = {
      GATEWAY_DATABASE_URL: db.url,
      GATEWAY_SECRET_KEY: 'faults-shared-secret-key',
      GATEWAY_HOST: '127.0.0.1',
      INITIAL_ROOT_TOKEN: ROOT_TOKEN,
      SIM_API_KEY: sim.key,
      SIM_BASE_URL: `${sim.url}/v1`,
      SIM_MODELS: 'sim-chat',
      REDIS_URL,
      REDIS_PREFIX: `kbchat-faults-${randomBytes(4).toString('hex')}`,
      CHANNEL_REFRESH_MS: '300',
    };
    // A migrates the fresh database and creates root; B joins.
    const a = await gateway('limits-A', env);
    const b = await gateway('limits-B', env);
    const me = await api(a, '/api/auth/me', { token: ROOT_TOKEN });
    const made = await api(a, '/api/tokens', { method: 'POST', token: ROOT_TOKEN, json: { user_id: me.body.user.id, name: 'thirty a minute' } });
    const tokenId = made.body.token?.id;
    const limited = await api(a, `/api/rate-limits/token/${tokenId}`, { method: 'PUT', token: ROOT_TOKEN, json: { rpm: 30 } });
    const where = await api(b, '/api/rate-limits', { token: ROOT_TOKEN });
    report.check(
      KASE,
      'limit set on A; counted on Redis',
      limited.status === 200 && where.body?.counting === 'redis',
      `HTTP ${limited.status}, ${where.body?.counting}`,
    );
    // B reads the limit at its next refresh.
    for (let i = 0; i < 50; i++) {
      if ((await api(b, '/api/rate-limits', { token: ROOT_TOKEN })).body.data.some((r) => r.subject === String(tokenId))) break;
      await sleep(100);
    }

    const ask = (url, i) =>
      api(url, '/v1/chat/completions', { method: 'POST', token: made.body.key, json: { model: 'sim-chat', messages: [{ role: 'user', content: `q ${i}` }] } });
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => ask(i % 2 ? a : b, i)));
    const ok = answers.filter((r) => r.status === 200).length;
    const refused = answers.filter((r) => r.status === 429 && r.body?.error?.code === 'rate_limit_exceeded').length;
    report.check(
      KASE,
      '60 through a 30/min token on two gateways: 30 answered, 30 refused',
      ok === 30 && refused === 30,
      `${ok} answered, ${refused} refused (429)`,
    );

    const code = await api(a, '/api/redemptions', { method: 'POST', token: ROOT_TOKEN, json: { name: 'race', quota: 1, count: 1 } });
    const key = code.body?.keys?.[0];
    const redeemed = await Promise.all(
      Array.from({ length: 16 }, (_, i) => api(i % 2 ? a : b, '/api/user/topup', { method: 'POST', token: ROOT_TOKEN, json: { key } })),
    );
    const credited = redeemed.filter((r) => r.status === 200).length;
    report.check(KASE, 'one code redeemed 16 times at once on both: credited once', credited === 1, `${credited} of 16 credited`);
  } finally {
    await db.drop().catch(() => {});
  }
}
