// Chat history (FastGPT's /api/core/chat/* paths): an application key reaches
// its own application's chats; a general key any application of its team.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import {
  answerStoppedSchema,
  chatHistoryPageSchema,
  chatInitSchema,
  chatItemPageSchema,
  chatItemQuery as itemQuery,
  chatQuery,
  chatRecordsBody as recordsBody,
  chatsDeletedSchema,
  clearHistoriesQuery as clearQuery,
  envelopeOf,
  feedbackBody,
  historiesBody,
  stopAnswerBody as stopBody,
  type PublicChatHistory,
  type PublicChatItem,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AnnotationsService } from '../annotations/service.js';
import type { AppsService } from '../apps/service.js';
import { done, ok } from '../datasets/routes.js';
import { errors, PlatformError } from '../http/errors.js';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { ShareService } from '../share/service.js';
import { STALE_AFTER_MS, type RunningAnswers } from './answer-recorder.js';
import type { ChatHistoryStore, ChatItemRow, ChatRow, ItemStatus, Visitor } from './history-store.js';
import { isAnonymous } from './routes.js';

/** These bodies are a few ids and numbers: more is not read. */
const BODY_LIMIT = 64 * 1024;

/**
 * An item's state as a reader sees it: a running answer whose heartbeat
 * stopped (its process died) is 'interrupted'.
 */
export function itemStatus(i: Pick<ChatItemRow, 'status' | 'updated_at' | 'created_at'>): ItemStatus | 'interrupted' {
  if (i.status !== 'running') return i.status;
  return Date.now() - Number(i.updated_at ?? i.created_at) > STALE_AFTER_MS ? 'interrupted' : 'running';
}

function parseError(json: string | null): { message: string; code: string; requestId?: string } | undefined {
  if (!json) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return { message: json, code: 'failed' };
  }
}

export function publicItem(i: ChatItemRow): PublicChatItem {
  const error = parseError(i.error);
  return {
    _id: String(i.id),
    dataId: i.data_id,
    obj: i.role === 'user' ? 'Human' : 'AI',
    value: [{ type: 'text', text: { content: i.content } }],
    // kbchat's own: an answer's state (running, done, stopped, failed, interrupted) and a failed one's error.
    status: itemStatus(i),
    ...(error ? { error } : {}),
    time: new Date(Number(i.created_at)).toISOString(),
    ...(i.response_data ? { responseData: JSON.parse(i.response_data) } : {}),
    ...(i.user_good_feedback ? { userGoodFeedback: i.user_good_feedback } : {}),
    ...(i.user_bad_feedback ? { userBadFeedback: i.user_bad_feedback } : {}),
  };
}

/** A chat in getHistories; the team (not a visitor) also sees which link and visitor a shared one is from. */
export function publicHistory(c: ChatRow, forTeam: boolean): PublicChatHistory {
  return {
    chatId: c.chat_id,
    appId: c.app_id,
    title: c.title,
    customTitle: '',
    top: false,
    updateTime: new Date(Number(c.updated_at)).toISOString(),
    source: c.source,
    ...(c.share_id && forTeam ? { shareId: c.share_id, outLinkUid: c.out_link_uid ?? '' } : {}),
  };
}

type Who = { appId?: string; shareId?: string; outLinkUid?: string; authToken?: string };
/** An application key, a general key or session (naming appId), or a share link's visitor (shareId and outLinkUid, no key). */
const readers: Record<string, string[]>[] = [{ apiKey: [] }, { session: [] }, {}];

/**
 * A key or a session is checked before the body is read; a request with
 * neither can only be a share link's visitor, who is named in the body or
 * query (shareId and outLinkUid), so is found after validation.
 */
export const chatHistoryPlugin: FastifyPluginAsync<{
  auth: RequestAuth;
  apps: AppsService;
  history: ChatHistoryStore;
  share: ShareService;
  running: RunningAnswers;
  /** The annotations that correct answers, shown with them to the team (never to a visitor). */
  annotations: AnnotationsService;
}> = async (fastify, deps) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.addHook('onRequest', async (req) => {
    if (!isAnonymous(req)) req.caller = await deps.auth.any(req);
  });
  /**
   * The caller's team and the application it may read: an app key's own,
   * (general key or session) the named one of its team, or (a share link's
   * visitor, no key) the link's app, with only that visitor's chats.
   */
  const scope = async (req: FastifyRequest, w: Who): Promise<{ teamId: string; appId: string; visitor?: Visitor }> => {
    if (isAnonymous(req) && w.shareId) {
      const v = await deps.share.reader(w.shareId, w);
      return { teamId: v.teamId, appId: v.appId, visitor: v.visitor };
    }
    const appId = w.appId;
    // Anonymous without a share link: refused as a request without a key.
    const caller = isAnonymous(req) ? await deps.auth.any(req) : req.caller;
    if (caller.appId) {
      if (appId && appId !== caller.appId) throw new PlatformError(403, 'forbidden', 'This application key opens only its own application');
      return { teamId: caller.teamId, appId: caller.appId };
    }
    if (!appId) throw errors.badField('appId', 'required with a general key or a session');
    await deps.apps.app(caller, appId); // 404 for another team's app
    return { teamId: caller.teamId, appId };
  };

  app.post(
    '/api/core/chat/getHistories',
    { bodyLimit: BODY_LIMIT, schema: { body: historiesBody, security: readers, response: { 200: envelopeOf(chatHistoryPageSchema) } } },
    async (req) => {
      const b = req.body;
      const s = await scope(req, b);
      const { rows, total } = await deps.history.listChats(s.teamId, s.appId, b.offset, b.pageSize, s.visitor, b.source);
      return ok({
        list: rows.map((c) => publicHistory(c, !s.visitor)),
        total,
      });
    },
  );

  // FastGPT's chat init: what a reopened chat needs besides its messages (its variables). A chatId
  // not stored yet is a new chat: empty, not a 404, as FastGPT answers.
  app.get('/api/core/chat/init', { schema: { querystring: chatQuery, security: readers, response: { 200: envelopeOf(chatInitSchema) } } }, async (req) => {
    const q = req.query;
    const s = await scope(req, q);
    const chat = await deps.history.chat({ ...s, chatId: q.chatId });
    return ok({ chatId: q.chatId, appId: s.appId, title: chat?.title ?? '', variables: chat?.parsedVariables ?? {} });
  });

  app.post(
    '/api/core/chat/getPaginationRecords',
    { bodyLimit: BODY_LIMIT, schema: { body: recordsBody, security: readers, response: { 200: envelopeOf(chatItemPageSchema) } } },
    async (req) => {
      const b = req.body;
      const s = await scope(req, b);
      const { rows, total } = await deps.history.items({ ...s, chatId: b.chatId }, b.offset, b.pageSize);
      const answerIds = s.visitor ? [] : rows.filter((r) => r.role === 'assistant').map((r) => r.data_id);
      const corrected = await deps.annotations.corrections(s, b.chatId, answerIds);
      return ok({
        total,
        list: rows.map((r) => {
          const a = corrected.get(r.data_id);
          return { ...publicItem(r), ...(a ? { annotation: { id: a.id, question: a.question, answer: a.answer } } : {}) };
        }),
      });
    },
  );

  app.delete('/api/core/chat/delHistory', { bodyLimit: BODY_LIMIT, schema: { querystring: chatQuery, security: readers, response: done } }, async (req) => {
    const q = req.query;
    const s = await scope(req, q);
    if (!(await deps.history.deleteChat({ ...s, chatId: q.chatId }))) throw errors.notFound(`Chat ${q.chatId}`);
    return ok(null);
  });

  app.delete('/api/core/chat/item/delete', { bodyLimit: BODY_LIMIT, schema: { querystring: itemQuery, security: readers, response: done } }, async (req) => {
    const q = req.query;
    const s = await scope(req, q);
    if (!(await deps.history.deleteItem({ ...s, chatId: q.chatId }, q.contentId))) throw errors.notFound(`Chat item ${q.contentId}`);
    return ok(null);
  });

  app.delete(
    '/api/core/chat/clearHistories',
    { bodyLimit: BODY_LIMIT, schema: { querystring: clearQuery, security: readers, response: { 200: envelopeOf(chatsDeletedSchema) } } },
    async (req) => {
      const q = req.query;
      const s = await scope(req, q);
      return ok({ deleted: await deps.history.clearChats(s.teamId, s.appId) });
    },
  );

  // Stops a running answer of the caller's own chat (the web app's Stop): what it made is kept, marked
  // stopped, with its question. An answer that already ended is left as it is ({stopped: false}).
  app.post(
    '/api/core/chat/item/stop',
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        body: stopBody,
        security: readers,
        summary: 'Stop a running answer (kept as stopped, with what it made)',
        response: { 200: envelopeOf(answerStoppedSchema) },
      },
    },
    async (req) => {
      const b = req.body;
      const s = await scope(req, b);
      const ref = { ...s, chatId: b.chatId };
      const chatPk = await deps.history.requestStop(ref, b.dataId);
      if (chatPk !== undefined) {
        deps.running.stop(chatPk, b.dataId);
        return ok({ stopped: true, status: 'stopped' as const });
      }
      const item = await deps.history.item(ref, b.dataId);
      if (!item || item.role !== 'assistant') throw errors.notFound(`Answer ${b.dataId} of chat ${b.chatId}`);
      return ok({ stopped: false, status: itemStatus(item) });
    },
  );

  // FastGPT's feedback on an answer: a non-empty text sets it, empty or absent clears it.
  app.post(
    '/api/core/chat/feedback/updateUserFeedback',
    { bodyLimit: BODY_LIMIT, schema: { body: feedbackBody, security: readers, response: done } },
    async (req) => {
      const b = req.body;
      const s = await scope(req, b);
      const ok_ = await deps.history.setFeedback({ ...s, chatId: b.chatId }, b.dataId, { good: b.userGoodFeedback || null, bad: b.userBadFeedback || null });
      if (!ok_) throw errors.notFound(`Answer ${b.dataId} of chat ${b.chatId}`);
      return ok(null);
    },
  );
};
