// The HTTP fronts of `kbchat start` (the gateway's and the platform's), from
// raw sockets as a hostile or broken client would use them: heads and bodies
// that stall must be answered 408 and closed within REQUEST_STALL_TIMEOUT_MS
// (the bound is the timeout plus one sweep of the same length), a hundred of
// them at once as well; malformed heads are refused at once with a request id.
import { cleanEnv, freePort, listeningUrl, RawSocket, sleep, startKbchat, tempDir } from './lib.mjs';

const STALL_MS = 2000;
/** A stalled request is closed after STALL_MS and before twice that (the sweep), plus scheduling slack. */
const CLOSE_BOUND_MS = 2 * STALL_MS + 1000;
const ROOT_TOKEN = 'sk-faults-front-root-token-0123456789';
const KEY = 'kbchat-faults-front-key-0123456789';

const chunk = (text) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

/** The stalls and refusals to try on one front. */
function shapes(front) {
  const post = (path, token, framing) =>
    `POST ${path} HTTP/1.1\r\nHost: kbchat\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}Content-Type: application/json\r\n${framing}\r\n`;
  const json = front === 'gateway' ? '{"username":"root","password":"not-all-of-it"}' : '{"name":"never finished"}';
  const path = front === 'gateway' ? '/api/auth/login' : '/api/core/dataset/create';
  const token = front === 'gateway' ? undefined : KEY;
  // The gateway hands chunked relay POSTs from its lean front to node:http: both paths are tried.
  const chunkedPath = front === 'gateway' ? '/v1/chat/completions' : path;
  const chunkedToken = front === 'gateway' ? ROOT_TOKEN : KEY;
  return {
    stalls: {
      'head stops midway': `POST ${path} HTTP/1.1\r\nHost: kbchat\r\nContent-Type: appl`,
      [`body stops (Content-Length, ${path})`]: post(path, token, `Content-Length: ${json.length}\r\n`) + json.slice(0, 10),
      [`chunked body stops (${chunkedPath})`]: post(chunkedPath, chunkedToken, 'Transfer-Encoding: chunked\r\n') + chunk('{"model":"sim-chat","messages":['),
    },
    refusals: {
      'bare-LF head': `POST ${path} HTTP/1.1\nHost: kbchat\nContent-Length: 2\n\n{}`,
      'invalid header name': `POST ${path} HTTP/1.1\r\nHost: kbchat\r\nBad Header: x\r\nContent-Length: 2\r\n\r\n{}`,
      'Content-Length with chunked': `POST ${path} HTTP/1.1\r\nHost: kbchat\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    },
  };
}

async function stalled(port, bytes) {
  const c = await RawSocket.open(port);
  c.send(bytes);
  const sentAt = Date.now();
  const closed = await c.closed(CLOSE_BOUND_MS + 3000);
  c.destroy();
  return { status: c.status, closed, ms: (c.closedAt ?? Date.now()) - sentAt };
}

async function frontCase(report, front, port) {
  const kase = `${front} front`;
  const { stalls, refusals } = shapes(front);
  const results = await Promise.all(Object.entries(stalls).map(async ([what, bytes]) => [what, await stalled(port, bytes)]));
  for (const [what, r] of results) {
    report.check(
      kase,
      what,
      r.status === 408 && r.closed && r.ms <= CLOSE_BOUND_MS,
      r.closed ? `${r.status ?? 'no answer'}, closed after ${(r.ms / 1000).toFixed(1)} s` : 'still open',
    );
  }
  for (const [what, bytes] of Object.entries(refusals)) {
    const c = await RawSocket.open(port);
    const sentAt = Date.now();
    c.send(bytes);
    const closed = await c.closed(STALL_MS);
    const ms = (c.firstByteAt ?? Date.now()) - sentAt;
    const id = /\r\nx-request-id: (\S+)/i.exec(c.data)?.[1];
    c.destroy();
    report.check(
      kase,
      what,
      c.status === 400 && ms < 500 && closed && Boolean(id),
      `${c.status ?? 'no answer'} after ${ms} ms${id ? ', with a request id' : ', no request id'}${closed ? '' : ', left open'}`,
    );
  }
  // A hundred clients that each send a piece and stop, all at once.
  const all = Object.values(stalls);
  const hundred = await Promise.all(Array.from({ length: 100 }, (_, i) => stalled(port, all[i % all.length])));
  const open = hundred.filter((r) => !r.closed || r.ms > CLOSE_BOUND_MS).length;
  const answered = hundred.filter((r) => r.status === 408).length;
  const slowest = Math.max(...hundred.map((r) => r.ms));
  report.check(
    kase,
    '100 stalled connections at once',
    open === 0 && answered === 100,
    `${100 - open} closed within ${CLOSE_BOUND_MS / 1000} s (slowest ${(slowest / 1000).toFixed(1)} s), ${answered} answered 408`,
  );
}

export async function httpFrontCase(report, sim) {
  const data = tempDir('front');
  const [gatewayPort, platformPort] = [await freePort(), await freePort()];
  const env = cleanEnv({
    REQUEST_STALL_TIMEOUT_MS: String(STALL_MS),
    INITIAL_ROOT_TOKEN: ROOT_TOKEN,
    INITIAL_API_KEY: KEY,
    SIM_API_KEY: sim.key,
    SIM_BASE_URL: `${sim.url}/v1`,
    SIM_MODELS: 'sim-chat',
  });
  const p = await startKbchat(
    'start',
    ['start', '--data-dir', data.dir, '--port', String(platformPort), '--gateway-port', String(gatewayPort)],
    env,
    /\[platform\] listening on/,
  );
  try {
    const gatewayUrl = listeningUrl(p, 'gateway');
    if (!report.check('gateway front', 'listens where asked', gatewayUrl === `http://127.0.0.1:${gatewayPort}`, gatewayUrl)) return;
    // Both fronts at once: their sweeps run in one process, as in a real start.
    await Promise.all([frontCase(report, 'gateway', gatewayPort), frontCase(report, 'platform', platformPort)]);
    await sleep(100);
    const code = await p.stop();
    report.check('platform front', 'kbchat start stops cleanly afterwards', code === 0, `exit code ${code}`);
  } finally {
    await p.kill9();
    data.remove();
  }
}
