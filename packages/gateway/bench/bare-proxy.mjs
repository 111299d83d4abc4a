// The floor for any Node relay: Fastify receives, undici forwards, the answer
// (or stream) is passed back untouched. No accounts, billing, logs or retries.
// The benchmark runs it beside the gateway to show how much of the cost is the
// HTTP machinery every Node gateway pays and how much is the gateway's own.
import Fastify from 'fastify';
import { Agent } from 'undici';

const [upstream, port] = [process.argv[2], Number(process.argv[3])];
const agent = new Agent({ connections: 512 });
const app = Fastify({ logger: false });
app.post('/v1/chat/completions', async (req, reply) => {
  const res = await agent.request({
    origin: upstream,
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-sim' },
    body: JSON.stringify(req.body),
  });
  reply.code(res.statusCode).header('content-type', res.headers['content-type']);
  return reply.send(res.body);
});
await app.listen({ port, host: '127.0.0.1' });
console.log(`bare proxy listening on ${port}`);
