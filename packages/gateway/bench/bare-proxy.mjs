// The floor for any Node relay: a server receives, undici forwards, the answer
// (or stream) is passed back untouched. No accounts, billing, logs or retries.
// The benchmark runs it beside the gateway to show how much of the cost is the
// HTTP machinery every Node gateway pays and how much is the gateway's own.
//   node bare-proxy.mjs <upstream> <port>        Fastify (what the gateway uses)
//   node bare-proxy.mjs <upstream> <port> raw    node:http alone, no framework
import { createServer } from 'node:http';
import Fastify from 'fastify';
import { Agent } from 'undici';

const [upstream, port, kind] = [process.argv[2], Number(process.argv[3]), process.argv[4] ?? 'fastify'];
const agent = new Agent({ connections: 512 });
const forward = (body) =>
  agent.request({
    origin: upstream,
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-sim' },
    body,
  });

if (kind === 'raw') {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const up = await forward(Buffer.concat(chunks));
        res.writeHead(up.statusCode, { 'content-type': up.headers['content-type'] });
        for await (const c of up.body) if (!res.write(c)) await new Promise((r) => res.once('drain', r));
        res.end();
      } catch {
        res.destroy();
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(port, '127.0.0.1', () => console.log(`bare proxy (node:http) listening on ${port}`));
} else {
  const app = Fastify({ logger: false });
  app.post('/v1/chat/completions', async (req, reply) => {
    const res = await forward(JSON.stringify(req.body));
    reply.code(res.statusCode).header('content-type', res.headers['content-type']);
    return reply.send(res.body);
  });
  await app.listen({ port, host: '127.0.0.1' });
  console.log(`bare proxy listening on ${port}`);
}
