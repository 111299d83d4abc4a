// The HTTP server: routing, API key and rate checks, request statistics, lifecycle.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { anthropic } from './anthropic.js';
import { chat } from './chat.js';
import { embeddings, rerank } from './embeddings.js';
import { keyProblem, oaiError, readBody, send, sendJson } from './http.js';
import { gemini } from './gemini.js';
import { LISTED_MODELS } from './models.js';
import type { ChatBody, SimConfig, SimStats, UpstreamSim, UpstreamSimOptions } from './types.js';

const MODELS_JSON = JSON.stringify({
  object: 'list',
  data: LISTED_MODELS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'sim' })),
});
const OK_JSON = '{"ok":true}';
const BAD_JSON = JSON.stringify({
  error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', param: null, code: null },
});

const envNumber = (name: string, dflt: number): number => Number(process.env[name] || dflt);

function resolveConfig(opts: UpstreamSimOptions): SimConfig {
  return {
    key: opts.key ?? (process.env.SIM_API_KEY || ''),
    keys: [opts.key ?? (process.env.SIM_API_KEY || ''), ...(opts.keys ?? [])].filter(Boolean),
    exhaustedKeys: opts.exhaustedKeys ?? [],
    tokens: opts.tokens ?? envNumber('SIM_TOKENS', 20),
    tokenDelayMs: opts.tokenDelayMs ?? envNumber('SIM_TOKEN_DELAY_MS', 0),
    embedDelayMs: opts.embedDelayMs ?? envNumber('SIM_EMBED_DELAY_MS', 0),
    slowMs: opts.slowMs ?? envNumber('SIM_SLOW_MS', 3000),
    rpm: opts.rpm ?? envNumber('SIM_RPM', 0),
    retryAfterSeconds: opts.retryAfterSeconds ?? envNumber('SIM_RETRY_AFTER', 0),
  };
}

/** Counters and last-seen request data. Null-prototype maps: model names are arbitrary strings. */
class SimState {
  total = 0;
  byModel: Record<string, number> = Object.create(null);
  byPath: Record<string, number> = Object.create(null);
  lastBody: Record<string, unknown> = Object.create(null);
  // The last counted request, kept as fields so recording it allocates nothing.
  lastMethod = '';
  lastPath = '';
  lastModel: unknown = undefined;
  lastAuthorization = false;
  /** The last request's X-Kbchat-Priority: kbchat's own header, which a third party must never get. */
  lastKbchatPriority: string | undefined = undefined;
  flaky = new Map<string, number>();
  /** Anthropic prompt-cache prefixes written (claude-sim-*). */
  promptCache = new Set<string>();
  // Fixed one-minute window for SIM_RPM (not cleared by reset, like the reference).
  windowStart = Date.now();
  windowCount = 0;

  /** `as` names the model where it is not the body's (Gemini: in the path). */
  count(req: IncomingMessage, path: string, body: ChatBody, as: unknown = body.model): void {
    this.total++;
    this.byPath[path] = (this.byPath[path] || 0) + 1;
    const model = String(as); // throws for a null body after counting it, like the reference
    this.byModel[model] = (this.byModel[model] || 0) + 1;
    this.lastBody[model] = body;
    this.lastMethod = req.method || '';
    this.lastPath = path;
    this.lastModel = as;
    const h = req.headers;
    this.lastAuthorization = h.authorization !== undefined || h['x-api-key'] !== undefined || h['x-goog-api-key'] !== undefined;
    this.lastKbchatPriority = h['x-kbchat-priority'] as string | undefined;
  }

  reset(): void {
    this.total = 0;
    this.byModel = Object.create(null);
    this.byPath = Object.create(null);
    this.lastBody = Object.create(null);
    this.lastMethod = '';
    this.lastPath = '';
    this.lastModel = undefined;
    this.lastAuthorization = false;
    this.lastKbchatPriority = undefined;
    this.flaky.clear();
    this.promptCache.clear();
  }

  snapshot(): SimStats {
    return {
      total: this.total,
      byModel: { ...this.byModel },
      byPath: { ...this.byPath },
      lastBody: { ...this.lastBody },
      lastRequest: this.lastPath
        ? {
            method: this.lastMethod,
            path: this.lastPath,
            model: this.lastModel,
            authorization: this.lastAuthorization,
            kbchatPriority: this.lastKbchatPriority ?? null,
          }
        : null,
    };
  }
}

function createHandler(cfg: SimConfig, state: SimState) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url || '';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method;
    if (path === '/sim/stats') return send(res, 200, state.snapshot());
    if (path === '/sim/reset' && method === 'POST') {
      state.reset();
      return sendJson(res, 200, OK_JSON);
    }
    // Anthropic's and Google's wire formats carry their keys in their own ways (no rpm limit there).
    if (method === 'POST' && path === '/v1/messages') return anthropic(req, res, cfg, state);
    if (method === 'POST' && /^\/v1(beta)?\/models\/[^/]+:[A-Za-z]+$/.test(path)) return gemini(req, res, path, q < 0 ? '' : url.slice(q + 1), cfg, state);
    const sent = req.headers.authorization?.replace(/^Bearer\s+/, '');
    const problem = keyProblem(cfg, sent);
    if (problem === 'quota') {
      return oaiError(
        res,
        429,
        'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
        'insufficient_quota',
        'insufficient_quota',
      );
    }
    if (problem) {
      // Like OpenAI: show the first characters of the key that was sent, never more.
      const shown = String(sent ?? '').slice(0, 6);
      return oaiError(
        res,
        401,
        `Incorrect API key provided: ${shown}****. You can find your API key in your account settings.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    if (path === '/v1/models' && method === 'GET') return sendJson(res, 200, MODELS_JSON);
    if (method !== 'POST') return oaiError(res, 404, `Invalid URL (${method} ${path})`, 'invalid_request_error');
    if (cfg.rpm) {
      const now = Date.now();
      if (now - state.windowStart > 60000) {
        state.windowStart = now;
        state.windowCount = 0;
      }
      if (++state.windowCount > cfg.rpm) {
        if (cfg.retryAfterSeconds) res.setHeader('retry-after', String(cfg.retryAfterSeconds));
        return oaiError(res, 429, `Rate limit reached: ${cfg.rpm} requests per minute`, 'requests', 'rate_limit_exceeded');
      }
    }
    const raw = await readBody(req);
    let body: ChatBody;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendJson(res, 400, BAD_JSON);
    }
    state.count(req, path, body); // a null body throws here: 500, like the reference
    if (path === '/v1/chat/completions') return chat(res, body, cfg, state);
    if (path === '/v1/embeddings') return embeddings(res, body, cfg);
    if (path === '/v1/rerank' || path === '/rerank') return rerank(res, body);
    return oaiError(res, 404, `Invalid URL (POST ${path})`, 'invalid_request_error');
  };
}

/** Starts an OpenAI-compatible upstream simulator on loopback (random port by default). */
export function startUpstreamSim(opts: UpstreamSimOptions = {}): Promise<UpstreamSim> {
  const cfg = resolveConfig(opts);
  const state = new SimState();
  const handle = createHandler(cfg, state);
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) oaiError(res, 500, String((err as Error)?.message || err), 'server_error');
      else res.destroy();
    });
  });
  // Longer than typical client pools' idle timeouts, so the client closes idle sockets first.
  server.keepAliveTimeout = 65000;
  const host = opts.host ?? '127.0.0.1';

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${urlHost}:${port}`,
        port,
        stats: () => state.snapshot(),
        reset: () => state.reset(),
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done()); // also called back (with an error) when already closed
            server.closeAllConnections(); // idle keep-alive sockets and unanswered requests (sim-hang)
          }),
      });
    });
  });
}
