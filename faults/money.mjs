// Two `kbchat gateway` processes on one server database, as an operator runs
// them behind a load balancer: ~400 concurrent requests split across both, a
// price changed through A's admin API while they run, then kill -9 of B in a
// second burst. Afterwards, with leases settled, the user must have paid
// exactly what the logs record: initial balance − balance = Σ logged cost.
import { api, cleanEnv, serverDatabase, sleep, startKbchat, freePort, tempDir } from './lib.mjs';

const ROOT_TOKEN = 'sk-faults-root-token-0123456789abcdef';
const ROOT_PASSWORD = 'faults-root-password';
const LEDGER_FLUSH_MS = 500;
const CHANNEL_REFRESH_MS = 500;
/**
 * The README's bound for a dead holder's leases: 2 × LEDGER_FLUSH_MS + 3 s,
 * plus the survivor's one batch write that comes before its look for dead
 * holders (given 1 s here, as multiprocess.test.ts does).
 */
const LEASE_BOUND_MS = 2 * LEDGER_FLUSH_MS + 3000 + 1000;
const BALANCE_UNITS = 5;
// Units per 1M tokens: a token costs this many micro-units.
const PRICE_BEFORE = { input: 2, output: 8 };
const PRICE_AFTER = { input: 100, output: 300 };

/** `n` chat requests at once, alternating between `targets`; each answer with where it went. */
function burst(targets, n, body) {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const p = targets[i % targets.length];
      try {
        const r = await api(p.url, '/v1/chat/completions', { method: 'POST', token: ROOT_TOKEN, json: body(i) });
        return { via: p.name, status: r.status, code: r.body?.error?.code, requestId: r.requestId };
      } catch (err) {
        return { via: p.name, status: 0, code: err.cause?.code ?? err.message, requestId: undefined };
      }
    }),
  );
}

const count = (rs, f) => rs.filter(f).length;

async function gateway(name, env) {
  const port = await freePort();
  const data = tempDir(`gw-${name}`);
  const p = await startKbchat(name, ['gateway', '--port', String(port)], cleanEnv({ ...env, DATA_DIR: data.dir }));
  return Object.assign(p, { url: `http://127.0.0.1:${port}`, data });
}

/** The case on one server store ('postgres' or 'mysql'). */
export async function moneyCase(report, kind, sim) {
  const kase = `money on ${kind === 'mysql' ? 'MariaDB' : 'PostgreSQL'}`;
  const db = await serverDatabase(kind);
  if (db.skip) return report.skip(kase, db.skip);
  const env = {
    GATEWAY_DATABASE_URL: db.url,
    GATEWAY_SECRET_KEY: 'faults-shared-secret-key',
    GATEWAY_HOST: '127.0.0.1',
    INITIAL_ROOT_TOKEN: ROOT_TOKEN,
    ROOT_PASSWORD,
    SIM_API_KEY: sim.key,
    SIM_BASE_URL: `${sim.url}/v1`,
    SIM_MODELS: 'sim-chat,sim-slow',
    DEFAULT_INPUT_PRICE: String(PRICE_BEFORE.input),
    DEFAULT_OUTPUT_PRICE: String(PRICE_BEFORE.output),
    LEDGER_FLUSH_MS: String(LEDGER_FLUSH_MS),
    CHANNEL_REFRESH_MS: String(CHANNEL_REFRESH_MS),
    BALANCE_LEASE_UNITS: '1',
  };
  let a, b;
  try {
    // A migrates the fresh database and creates root; B joins.
    a = await gateway('A', env);
    b = await gateway('B', env);
    const login = await api(a.url, '/api/auth/login', { method: 'POST', json: { username: 'root', password: ROOT_PASSWORD } });
    const session = login.body.session;
    const rootId = login.body.user.id;
    const set = await api(a.url, `/api/users/${rootId}`, { method: 'PATCH', token: session, json: { balance: BALANCE_UNITS } });
    report.check(kase, 'balance set through the admin API', set.status === 200, `HTTP ${set.status}, ${BALANCE_UNITS} units`);

    // Burst 1: 400 at once, half on each; the price of sim-chat changes on A while they run.
    const body = (i) => ({ model: i % 4 < 2 ? 'sim-slow' : 'sim-chat', messages: [{ role: 'user', content: `request ${i}` }], max_tokens: 64 });
    const running = burst([a, b], 400, body);
    await sleep(300);
    const priced = await api(a.url, '/api/prices/sim-chat', {
      method: 'PUT',
      token: session,
      json: { input_price: PRICE_AFTER.input, output_price: PRICE_AFTER.output },
    });
    const changedAt = Date.now();
    const first = await running;
    const served1 = count(first, (r) => r.status === 200);
    const errors1 = first.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.code}`);
    report.check(
      kase,
      '400 concurrent requests over A and B',
      served1 === 400,
      `${served1} served (A ${count(first, (r) => r.via === 'A' && r.status === 200)}, B ${count(first, (r) => r.via === 'B' && r.status === 200)})${errors1.length ? `; ${[...new Set(errors1)].join(', ')}` : ''}`,
    );

    // Probes sent once CHANNEL_REFRESH_MS has passed since the change (plus one refresh's own time).
    await sleep(Math.max(0, changedAt + CHANNEL_REFRESH_MS + 200 - Date.now()));
    const probes = [];
    for (const p of [a, b, a, b, a, b]) {
      const r = await api(p.url, '/v1/chat/completions', {
        method: 'POST',
        token: ROOT_TOKEN,
        json: { model: 'sim-chat', messages: [{ role: 'user', content: 'what does it cost now' }], max_tokens: 32 },
      });
      probes.push({ via: p.name, status: r.status, requestId: r.requestId });
    }
    const rows = await logRows(
      db,
      probes.map((p) => p.requestId),
      LEDGER_FLUSH_MS * 6,
    );
    const wrong = probes.filter((p) => {
      const row = rows.get(p.requestId);
      return !row || Number(row.cost) !== Number(row.prompt_tokens) * PRICE_AFTER.input + Number(row.completion_tokens) * PRICE_AFTER.output;
    });
    report.check(
      kase,
      'price set on A charged by A and B',
      priced.status === 200 && wrong.length === 0,
      wrong.length
        ? `wrong or missing cost for ${wrong.map((w) => `${w.via}:${w.requestId}`).join(', ')}`
        : `new price on both ${CHANNEL_REFRESH_MS + 200} ms after the change (CHANNEL_REFRESH_MS ${CHANNEL_REFRESH_MS})`,
    );

    // Burst 2: 200 slow requests; B is killed while its half is in flight.
    // Fast requests keep reaching B up to its death, so that it dies with answered requests whose rows it never wrote.
    const second = burst([a, b], 200, (i) => ({ model: 'sim-slow', messages: [{ role: 'user', content: `second ${i}` }], max_tokens: 64 }));
    let trickling = true;
    const trickle = (async () => {
      const sent = [];
      while (trickling) {
        sent.push(burst([b], 1, () => ({ model: 'sim-chat', messages: [{ role: 'user', content: 'quick one' }], max_tokens: 16 })));
        await sleep(10);
      }
      return (await Promise.all(sent)).flat();
    })();
    await sleep(600);
    const heldByB = await db.query(
      'select coalesce(sum(l.amount), 0) as held from balance_leases l join ledger_holders h on h.id = l.holder_id where h.pid = ?',
      [b.pid],
    );
    await b.kill9();
    const killedAt = Date.now();
    trickling = false;
    let left = Infinity;
    while (Date.now() - killedAt < LEASE_BOUND_MS + 5000) {
      const r = await db.query('select count(*) as n from balance_leases l join ledger_holders h on h.id = l.holder_id where h.pid = ?', [b.pid]);
      left = Number(r[0].n);
      if (left === 0) break;
      await sleep(50);
    }
    const returnedMs = Date.now() - killedAt;
    report.check(
      kase,
      'kill -9 of B: its leases return',
      left === 0 && returnedMs <= LEASE_BOUND_MS,
      `${(Number(heldByB[0].held) / 1e6).toFixed(3)} units held by B came back after ${(returnedMs / 1000).toFixed(1)} s (bound ${LEASE_BOUND_MS / 1000} s)`,
    );
    const after = await second;
    const quick = await trickle;
    const servedA = count(after, (r) => r.via === 'A' && r.status === 200);
    report.check(
      kase,
      'A serves its half while B dies',
      servedA === 100,
      `A served ${servedA} of 100; B's clients saw ${[...new Set(after.filter((r) => r.via === 'B').map((r) => r.status || r.code))].join(', ')}`,
    );

    const stopped = await a.stop();
    report.check(kase, 'A stops cleanly', stopped === 0, `exit code ${stopped}`);

    // The books, exactly.
    const [user] = await db.query('select balance, used from users where id = ?', [rootId]);
    const [logs] = await db.query('select count(*) as n, coalesce(sum(cost), 0) as spent from logs where user_id = ?', [rootId]);
    const leases = await db.query('select count(*) as n from balance_leases');
    const spent = Number(logs.spent);
    const paid = BALANCE_UNITS * 1e6 - Number(user.balance);
    report.check(kase, 'no lease left once both are gone', Number(leases[0].n) === 0, `${leases[0].n} lease rows`);
    report.check(
      kase,
      'initial − balance = Σ logged cost',
      paid === spent && Number(user.used) === spent,
      `${paid} = ${spent} micro-units over ${logs.n} log rows; used ${user.used}; balance ${(Number(user.balance) / 1e6).toFixed(6)} units`,
    );

    // Every request A answered has its row; B's answered requests without a row cost the user nothing.
    const answered = [...first, ...after, ...quick].filter((r) => r.status === 200);
    const found = await logRows(
      db,
      answered.map((r) => r.requestId),
      0,
    );
    const missingA = answered.filter((r) => r.via === 'A' && !found.has(r.requestId)).length;
    const missingB = answered.filter((r) => r.via === 'B' && !found.has(r.requestId)).length;
    report.check(
      kase,
      'every answer of A is logged',
      missingA === 0,
      `${missingA} of A's answers without a row; B died with ${missingB} answered requests unwritten (${count(quick, (r) => r.status === 200)} quick ones answered), which the user does not pay for`,
    );
  } finally {
    for (const p of [a, b]) {
      if (!p) continue;
      await p.kill9();
      p.data.remove();
    }
    await db.drop();
  }
}

/** The log rows of these request ids, waiting up to `waitMs` for all of them. */
async function logRows(db, ids, waitMs) {
  const want = ids.filter(Boolean);
  const until = Date.now() + waitMs;
  const rows = new Map();
  for (;;) {
    for (let i = 0; i < want.length; i += 500) {
      const part = want.slice(i, i + 500).filter((id) => !rows.has(id));
      if (part.length === 0) continue;
      const found = await db.query(
        `select request_id, cost, prompt_tokens, completion_tokens from logs where request_id in (${part.map(() => '?').join(',')})`,
        part,
      );
      for (const r of found) rows.set(r.request_id, r);
    }
    if (rows.size >= want.length || Date.now() >= until) return rows;
    await sleep(100);
  }
}
