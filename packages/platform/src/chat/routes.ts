// POST /api/v1/chat/completions: an application's chat, for its own key only,
// and GET /api/v1/models, which lists that application as the one model (chat
// UIs list models first). Parses and shapes; the turn itself is ChatService's.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  appModelListSchema,
  chatCompletionSchema,
  chatCompletionsBody as chatBody,
  type AppModel,
  type ChatCompletion,
  type ChatMessage,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { App, AppsService } from '../apps/service.js';
import { GatewayError } from '../gateway-client/index.js';
import { errors, PlatformError } from '../http/errors.js';
import { toPlatformError } from '../http/server.js';
import { SESSION_COOKIE, type RequestAuth } from '../accounts/request-auth.js';
import type { ShareService } from '../share/service.js';
import { newId } from '../keys/auth.js';
import type { ChatHistoryStore } from './history-store.js';
import type { ChatService } from './pipeline.js';
import type { ChatTurn } from './prompt.js';
import { ChatEventStream } from './sse.js';
import type { RunningAnswers } from './answer-recorder.js';
import type { AnswerCosts } from './answer-costs.js';
import { beginChatTurn, type AppCaller } from './turn.js';

/** The text FastGPT clients already look for. */
export const APP_KEY_REQUIRED = 'Key is error. You need to use the app key rather than the account key.';
/**
 * The largest chat body read. Images sent as data URLs make several MB
 * legitimate (OpenAI takes images of up to 20 MB; FastGPT's own limit for
 * this route is 20 MB), and chat UIs resend a conversation's images on every
 * turn; the text a model reads is far less (the question is checked against
 * the model's maxContext).
 */
export const CHAT_BODY_LIMIT = 20 * 1024 * 1024;

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

/** Chat errors carry the platform envelope and OpenAI's `error` object, so both kinds of client show the message. */
export function chatErrorBody(e: PlatformError) {
  return { ...e.toBody(), error: { message: e.message, type: e.statusText, code: e.statusText } };
}

export function chatError(err: unknown, req: FastifyRequest): PlatformError {
  // A 401 from the gateway is about the platform's own token, not the caller's key.
  if (err instanceof GatewayError && err.status === 401) {
    return new PlatformError(502, 'gateway_token_refused', `The gateway refused the platform's GATEWAY_TOKEN: ${err.message}`);
  }
  return toPlatformError(err, req);
}

/** Without a key or session, and without ?shareId=, no more than this is read to find the share link in the body. */
export const ANONYMOUS_BODY_LIMIT = 1024 * 1024;

/** The request carries no key and no session: it can only be a share link's visitor. */
export function isAnonymous(req: FastifyRequest): boolean {
  return req.headers.authorization === undefined && !req.cookies?.[SESSION_COOKIE];
}

/**
 * Before the body of an anonymous chat is read: a share link named in the
 * query must be usable; without one, only a small body is read to find it.
 */
async function checkAnonymous(share: ShareService, req: FastifyRequest): Promise<void> {
  const shareId = (req.query as Record<string, unknown> | undefined)?.shareId;
  if (typeof shareId === 'string' && shareId) {
    await share.open(shareId);
    return;
  }
  const length = Number(req.headers['content-length']);
  if (!(length <= ANONYMOUS_BODY_LIMIT)) {
    throw errors.tooLarge(
      `Without an API key or a session, a chat body is read only up to 1 MB (and only with a Content-Length): name the share link in the query (?shareId=) to send more, or send "Authorization: Bearer <app key>"`,
    );
  }
}

/** The question: the last message, the user's, with text (a 400 naming it otherwise). */
function questionOf(body: z.output<typeof chatBody>): string {
  const last = body.messages.length - 1;
  const question = textOf(body.messages[last]!.content).trim();
  if (body.messages[last]!.role !== 'user' || !question)
    throw new PlatformError(400, 'invalid_field', `Invalid 'messages[${last}]': the last message must be the user's question (role "user" with text)`);
  return question;
}

/** A share link's visitor, from the body (FastGPT's share page) or the query; a link with a hook asks it about the (checked) question. */
async function visitorCaller(share: ShareService, req: FastifyRequest, body: z.output<typeof chatBody>): Promise<AppCaller> {
  const shareId = body.shareId ?? (req.query as Record<string, string | undefined>)?.shareId;
  if (!shareId) throw errors.missingKey();
  return share.caller(shareId, { outLinkUid: body.outLinkUid, authToken: body.authToken }, questionOf(body));
}

/**
 * The application a chat request talks to: an application key's own, or,
 * for a signed-in session (the web app), the team's application named by
 * `?appId=` (in the query: the caller is known before the body is read).
 * A general key is refused, as FastGPT does.
 */
export async function appCaller(auth: RequestAuth, apps: AppsService, req: FastifyRequest): Promise<AppCaller> {
  const caller = await auth.any(req);
  if (caller.keyId === null) {
    const appId = (req.query as Record<string, unknown> | undefined)?.appId;
    if (typeof appId !== 'string' || !appId)
      throw errors.badField('appId', 'name the application in the query (?appId=) when chatting signed in; an application key names its own');
    await apps.app(caller, appId); // 404 for another team's
    return { ...caller, appId };
  }
  if (!caller.appId) throw new PlatformError(403, 'app_key_required', APP_KEY_REQUIRED);
  return caller as AppCaller;
}

export interface ChatRouteDeps {
  auth: RequestAuth;
  apps: AppsService;
  chat: ChatService;
  history: ChatHistoryStore;
  share: ShareService;
  /** The answers this process is making (a stop request aborts one here). */
  running: RunningAnswers;
  /** CHAT_ON_DISCONNECT=stop: a stored chat's answer stops when its client leaves (by default it is finished and stored). */
  stopOnDisconnect: boolean;
  /** Reads a stored answer's cost from the gateway's log once it is there. */
  costs?: AnswerCosts;
}

/** The OpenAI-compatible routes: their errors carry OpenAI's `error` object too (a refused body's 400 included). */
export const chatPlugin: FastifyPluginAsync<ChatRouteDeps> = async (fastify, deps) => {
  const scope = fastify.withTypeProvider<ZodTypeProvider>();
  scope.setErrorHandler((err: unknown, req, reply) => {
    const e = chatError(err, req);
    if (e.headers) reply.headers(e.headers);
    reply.header('x-request-id', req.id).code(e.status).send(chatErrorBody(e));
  });
  // The key is checked before the body is read: without one, not a byte of a 20 MB body is kept.
  const callers = new WeakMap<FastifyRequest, AppCaller>();
  scope.post(
    '/api/v1/chat/completions',
    {
      bodyLimit: CHAT_BODY_LIMIT,
      // An application key; a session with ?appId=; or a share link's visitor (shareId and outLinkUid, no key).
      // The answer without stream; a stream is SSE (chat/sse.ts), written past Fastify.
      schema: { body: chatBody, security: [{ apiKey: [] }, { session: [] }, {}], response: { 200: chatCompletionSchema } },
      onRequest: async (req) => {
        if (isAnonymous(req)) await checkAnonymous(deps.share, req);
        else callers.set(req, await appCaller(deps.auth, deps.apps, req));
      },
    },
    async (req, reply) => completions(deps, callers.get(req) ?? (await visitorCaller(deps.share, req, req.body)), req.body, req, reply),
  );
  scope.get(
    '/api/v1/models',
    {
      schema: { description: 'The application of the key (or ?appId= with a session), as the one model', response: { 200: appModelListSchema } },
      onRequest: async (req) => {
        callers.set(req, await appCaller(deps.auth, deps.apps, req));
      },
    },
    async (req) => {
      const caller = callers.get(req)!;
      return { object: 'list' as const, data: [modelEntry(await deps.apps.app(caller, caller.appId))] };
    },
  );
};

/**
 * The application as an OpenAI model: its id is the appId. The chat body's
 * `model` is not read (the key names the application), so this id, or any
 * other value, chats with it; `name` is for UIs that show one.
 */
function modelEntry(app: App): AppModel {
  return { id: app.id, object: 'model', created: Math.floor(app.createdAt / 1000), owned_by: 'kbchat', name: app.name };
}

async function completions(
  deps: ChatRouteDeps,
  caller: AppCaller,
  b: z.output<typeof chatBody>,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<ChatCompletion | void> {
  const question = questionOf(b);
  const last = b.messages.length - 1;
  const app = await deps.apps.app(caller, caller.appId);
  const chatId = b.chatId || undefined;
  const id = chatId ?? `chatcmpl-${newId()}`;
  const stream = b.stream
    ? new ChatEventStream(reply.raw, {
        id,
        model: app.settings.model,
        detail: b.detail,
        includeUsage: b.stream_options?.include_usage === true,
        requestId: req.id,
      })
    : undefined;
  // The turn itself (history, storing, recording, costs) is turn.ts's, which the application's MCP server runs too.
  const turn = await beginChatTurn(deps, {
    caller,
    app,
    question,
    chatId,
    messages: b.messages
      .slice(0, last)
      .flatMap((m): ChatTurn[] => ((m.role === 'user' || m.role === 'assistant') && textOf(m.content) ? [{ role: m.role, content: textOf(m.content) }] : [])),
    variables: b.variables,
    answerId: b.responseChatItemId,
    sink: stream,
    stream: !!stream,
    requestId: req.id,
    toError: (err) => chatError(err, req),
    log: req.log,
  });
  if (stream) reply.hijack();
  // A stored chat's answer is finished when its client goes away, unless the operator chose otherwise (CHAT_ON_DISCONNECT=stop).
  reply.raw.on('close', () => {
    if (reply.raw.writableFinished) return;
    turn.clientGone(deps.stopOnDisconnect);
    // A half-closed socket would otherwise wait for an answer nobody reads (and hold up shutdown).
    reply.raw.socket?.destroy();
  });
  const outcome = await turn.run();
  if (outcome.status === 'done') {
    const result = outcome.result;
    if (stream) return stream.finish(result.usage, result.responseData);
    return {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: result.model,
      usage: result.usage,
      choices: [{ message: { role: 'assistant', content: result.content }, finish_reason: 'stop', index: 0 }],
      ...(b.detail ? { responseData: result.responseData, newVariables: result.newVariables } : {}),
    };
  }
  if (outcome.status === 'stopped') {
    // Stopped by its asker: a client still reading gets what was made as the answer.
    if (stream) return stream.finish({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, []);
    return {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: app.settings.model,
      stopped: true,
      choices: [{ message: { role: 'assistant', content: outcome.content }, finish_reason: 'stop', index: 0 }],
    };
  }
  const e = outcome.error;
  if (!stream) throw outcome.cause;
  if (stream.started) return stream.fail(chatErrorBody(e));
  reply.raw.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': req.id });
  reply.raw.end(JSON.stringify(chatErrorBody(e)));
}
