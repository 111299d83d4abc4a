// startLocalModels: an in-process HTTP server on 127.0.0.1 speaking the OpenAI
// wire format, so that the gateway reaches local models through an ordinary
// channel and its relay path stays one. node:http keeps this package small.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadTokenizer } from '@kbchat/shared';
import { ExtractiveEngine } from './chat/extractive-engine.js';
import { handleChat } from './chat/chat-route.js';
import type { ChatEngine } from './chat/chat-engine.js';
import { EmbedPool } from './embeddings/embed-pool.js';
import { declaredPriority, handleEmbeddings, PRIORITY_HEADER } from './embeddings/embeddings-route.js';
import { DEFAULT_EXTRACTIVE_OPTIONS, type ExtractiveOptions } from './extractive/extractive-answer.js';
import { findGguf, GgufEngine } from './gguf/gguf-engine.js';
import { LocalModelError, modelNotFound, readJsonBody, sendError, sendJson } from './http-util.js';
import { embedModelInfo, extractiveModelInfo, ggufModelInfo, LOCAL_EMBED_MODEL, type LocalModelInfo } from './models.js';

export interface LocalModelsOptions {
  /** Default 127.0.0.1: these models have no authentication of their own. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Embedding worker threads; default 1 (env LOCAL_EMBED_WORKERS). Measured: 2 are slower on 2 cores. */
  embedWorkers?: number;
  /** Most inputs per model call; default 32 (env LOCAL_EMBED_MAX_BATCH). */
  embedMaxBatch?: number;
  /**
   * Interactive embeddings (requests marked `X-Kbchat-Priority: interactive`, or
   * unmarked ones of at most embedInteractiveMaxInputs inputs, and
   * local-extractive's own) go ahead of indexing (`X-Kbchat-Priority: bulk`, or
   * larger), whose batches shrink while someone chats; default true (env
   * LOCAL_EMBED_PRIORITY=off: one lane, as before; a value other than on/off
   * and their synonyms is refused at start).
   */
  embedPriority?: boolean;
  /** Embeddings requests of at most this many inputs are interactive; default 8. */
  embedInteractiveMaxInputs?: number;
  /** Most inputs in one embeddings request; default 2048. */
  maxEmbeddingInputs?: number;
  /** Longest single embeddings input in characters; default 32768 (413 past it). */
  maxInputChars?: number;
  /** Largest request body; default 8 MiB (413 past it). */
  maxBodyBytes?: number;
  /** Load the embedding model before resolving (otherwise on first use, or call warmup()). */
  warmup?: boolean;
  /** A GGUF file for local-gguf (env LOCAL_GGUF_PATH); needs the optional node-llama-cpp package. */
  ggufPath?: string;
  /** local-gguf context size in tokens; default 4096. */
  ggufContextSize?: number;
  extractive?: Partial<ExtractiveOptions>;
}

export interface LocalModels {
  /** e.g. http://127.0.0.1:40123/v1: an OpenAI-compatible base URL for a gateway channel. */
  baseUrl: string;
  models: LocalModelInfo[];
  /** Loads the embedding model now (kbchat start calls it so the first request is not slow). */
  warmup(): Promise<void>;
  close(): Promise<void>;
}

export async function startLocalModels(options: LocalModelsOptions = {}): Promise<LocalModels> {
  const env = process.env;
  const pool = new EmbedPool({
    workers: positive(options.embedWorkers ?? env.LOCAL_EMBED_WORKERS, 1),
    maxBatch: positive(options.embedMaxBatch ?? env.LOCAL_EMBED_MAX_BATCH, 32),
    enabled: options.embedPriority ?? onOff(env, 'LOCAL_EMBED_PRIORITY', true),
  });
  const limits = {
    maxInputs: options.maxEmbeddingInputs ?? 2048,
    maxInputChars: options.maxInputChars ?? 32_768,
    interactiveMaxInputs: options.embedInteractiveMaxInputs ?? 8,
  };
  const maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const engines = new Map<string, ChatEngine>();
  const extractive = new ExtractiveEngine(pool, { ...DEFAULT_EXTRACTIVE_OPTIONS, ...options.extractive });
  engines.set(extractive.model, extractive);
  const models = [embedModelInfo(), extractiveModelInfo()];

  const gguf = findGguf(options.ggufPath ?? env.LOCAL_GGUF_PATH);
  let ggufEngine: GgufEngine | undefined;
  if (gguf.available) {
    ggufEngine = new GgufEngine(gguf.path, options.ggufContextSize ?? 4096);
    engines.set(ggufEngine.model, ggufEngine);
    models.push(ggufModelInfo(gguf.fileName));
  }

  await loadTokenizer();
  if (options.warmup) await pool.warmup();

  const modelIds = models.map((m) => m.id);
  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => sendError(res, err));
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      sendJson(res, 200, { object: 'list', data: models });
      return;
    }
    const endpoint = path.replace(/^\/v1/, '');
    if (req.method !== 'POST' || (endpoint !== '/embeddings' && endpoint !== '/chat/completions')) {
      throw new LocalModelError(404, `No route ${req.method} ${path}; local models serve /v1/models, /v1/embeddings and /v1/chat/completions.`, 'not_found');
    }
    const body = await readJsonBody(req, maxBodyBytes);
    const model = body.model;
    if (typeof model !== 'string' || model === '') throw new LocalModelError(400, "Missing 'model': a non-empty string.", 'invalid_field', 'model');
    if (endpoint === '/embeddings') {
      if (model !== LOCAL_EMBED_MODEL) {
        if (engines.has(model))
          throw new LocalModelError(400, `The model '${model}' is a chat model; use ${LOCAL_EMBED_MODEL} for embeddings.`, 'invalid_model', 'model');
        throw modelNotFound(model, modelIds);
      }
      await handleEmbeddings(body, res, pool, limits, declaredPriority(req.headers[PRIORITY_HEADER]));
      return;
    }
    const engine = engines.get(model);
    if (!engine) {
      if (model === LOCAL_EMBED_MODEL)
        throw new LocalModelError(400, `The model '${model}' is an embeddings model, not a chat model.`, 'invalid_model', 'model');
      throw modelNotFound(model, modelIds);
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    await handleChat(body, res, engine, abort.signal);
  }

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    models,
    warmup: () => pool.warmup(),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([pool.close(), ggufEngine?.close()]);
    },
  };
}

/** An on/off setting; anything else is refused (a typo must not silently mean "on"). */
export function onOff(env: Record<string, string | undefined>, name: string, dflt: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return dflt;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new Error(`${name} must be on or off (also true/false, 1/0, yes/no); got "${env[name]}"`);
}

function positive(value: number | string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
