// The OpenAI-compatible surface: /v1/chat/completions, /v1/embeddings,
// /v1/rerank, /v1/models. Routes authenticate, hand the parsed body to the
// relay and adapt Fastify's reply to the Responder the relay writes to.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Caller, TokenAuthenticator } from '../accounts/auth.js';
import { GatewayError } from '../errors.js';
import { endpointOfModel } from '../providers/index.js';
import { relayChat } from './chat.js';
import { endStreamWithError } from './chat-stream.js';
import { ClientSignal, type RelayContext, type RelayDeps, type Responder } from './context.js';
import { relayEmbeddings, relayRerank } from './json-endpoints.js';

// A flat [name, value, ...] list: Node writes it without building a header object per stream.
const SSE_HEADERS = ['content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'connection', 'keep-alive', 'x-accel-buffering', 'no'];

/** Resolves when the socket takes more, or is gone; leaves no listener behind. */
function drained(raw: NodeJS.WritableStream & { destroyed: boolean }): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.on('drain', done);
    raw.on('close', done);
  });
}

/** The relay's Responder over a Fastify reply (a class: one allocation per request). */
export class ReplyResponder implements Responder {
  started = false;

  constructor(
    private readonly reply: FastifyReply,
    private readonly requestId: string,
  ) {}

  json(status: number, text: string): void {
    this.reply.code(status).header('content-type', 'application/json').send(text);
  }

  startStream(): void {
    if (this.started) return;
    this.started = true;
    this.reply.hijack();
    this.reply.raw.writeHead(200, [...SSE_HEADERS, 'x-request-id', this.requestId]);
  }

  write(text: string): void | Promise<void> {
    const raw = this.reply.raw;
    if (raw.destroyed || raw.writableEnded) return;
    if (!raw.write(text)) return drained(raw);
  }

  end(text?: string): void {
    const raw = this.reply.raw;
    if (raw.writableEnded) return;
    if (text && !raw.destroyed) raw.end(text);
    else raw.end();
  }
}

/** server.ts keeps the JSON text of a request body here. */
export type RawBodyRequest = FastifyRequest & { rawBody?: string };
type CallerRequest = FastifyRequest & { caller: Caller };

type Handler = (deps: RelayDeps, ctx: RelayContext, body: unknown, r: Responder) => Promise<void>;

export function relayRoutes(app: FastifyInstance, deps: RelayDeps, auth: TokenAuthenticator): void {
  // The token is checked in onRequest, before the body is read: an anonymous
  // client cannot make the gateway receive and parse a 64 MB body.
  const authenticate = async (req: FastifyRequest) => {
    (req as CallerRequest).caller = await auth.authenticate(req.headers.authorization, req.ip);
  };
  const handle = (fn: Handler) => async (req: FastifyRequest, reply: FastifyReply) => {
    const caller = (req as CallerRequest).caller;
    const signal = new ClientSignal();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) signal.abort();
    });
    const rawBody = (req as RawBodyRequest).rawBody;
    const ctx: RelayContext = { requestId: req.id, caller, startedAt: Date.now(), signal, rawBody };
    const responder = new ReplyResponder(reply, req.id);
    try {
      await fn(deps, ctx, req.body, responder);
    } catch (err) {
      if (!responder.started) throw err;
      // The stream is open: the error can only travel inside it.
      const e = err instanceof GatewayError ? err : new GatewayError(500, (err as Error).message, 'server_error');
      endStreamWithError(responder, e, req.id);
    }
    return reply;
  };

  app.post('/v1/chat/completions', { onRequest: authenticate }, handle(relayChat));
  app.post('/v1/embeddings', { onRequest: authenticate }, handle(relayEmbeddings));
  app.post('/v1/rerank', { onRequest: authenticate }, handle(relayRerank));

  app.get('/v1/models', async (req) => {
    const caller = await auth.authenticate(req.headers.authorization, req.ip);
    const data = [];
    for (const id of deps.registry.servedModels().sort()) {
      if (caller.models && !caller.models.has(id)) continue;
      const ch = deps.registry.all().find((c) => c.enabled && c.models.includes(id));
      data.push({ id, object: 'model', created: 0, owned_by: ch?.type ?? 'kbchat', endpoint: endpointOfModel(id, ch?.options), ...ch?.options.modelInfo?.[id] });
    }
    return { object: 'list', data };
  });
}
