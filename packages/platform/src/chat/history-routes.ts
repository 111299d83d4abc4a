// Chat history (FastGPT's /api/core/chat/* paths): an application key reaches
// its own application's chats; a general key any application of its team.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppsService } from '../apps/service.js';
import { ok } from '../datasets/routes.js';
import { errors, PlatformError } from '../http/errors.js';
import { parseInput } from '../http/validate.js';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { ChatHistoryStore, ChatItemRow } from './history-store.js';

/** These bodies are a few ids and numbers: more is not read. */
const BODY_LIMIT = 64 * 1024;
const id = z.string().min(1).max(64);
const page = { offset: z.number().int().min(0).default(0), pageSize: z.number().int().min(1).max(500).default(30) };

function publicItem(i: ChatItemRow) {
  return {
    _id: String(i.id), dataId: i.data_id, obj: i.role === 'user' ? 'Human' : 'AI', value: [{ type: 'text', text: { content: i.content } }],
    time: new Date(Number(i.created_at)).toISOString(), ...(i.response_data ? { responseData: JSON.parse(i.response_data) } : {}),
  };
}

export function chatHistoryRoutes(app: FastifyInstance, deps: { auth: RequestAuth; apps: AppsService; history: ChatHistoryStore }): void {
  /** The caller's team and the application it may read: an app key's own, or (general key) the named one of its team. */
  const scope = async (req: FastifyRequest, appId: string | undefined) => {
    const caller = await deps.auth.any(req);
    if (caller.appId) {
      if (appId && appId !== caller.appId) throw new PlatformError(403, 'forbidden', 'This application key opens only its own application');
      return { teamId: caller.teamId, appId: caller.appId };
    }
    if (!appId) throw errors.badField('appId', 'required with a general key or a session');
    await deps.apps.app(caller, appId); // 404 for another team's app
    return { teamId: caller.teamId, appId };
  };

  app.post('/api/core/chat/getHistories', { bodyLimit: BODY_LIMIT }, async (req) => {
    const b = parseInput(z.object({ appId: id.optional(), ...page }), req.body);
    const s = await scope(req, b.appId);
    const { rows, total } = await deps.history.listChats(s.teamId, s.appId, b.offset, b.pageSize);
    return ok({
      list: rows.map((c) => ({ chatId: c.chat_id, appId: c.app_id, title: c.title, customTitle: '', top: false, updateTime: new Date(Number(c.updated_at)).toISOString() })),
      total,
    });
  });

  app.post('/api/core/chat/getPaginationRecords', { bodyLimit: BODY_LIMIT }, async (req) => {
    const b = parseInput(z.object({ appId: id.optional(), chatId: id, ...page }), req.body);
    const s = await scope(req, b.appId);
    const { rows, total } = await deps.history.items({ ...s, chatId: b.chatId }, b.offset, b.pageSize);
    return ok({ list: rows.map(publicItem), total });
  });

  app.delete('/api/core/chat/delHistory', { bodyLimit: BODY_LIMIT }, async (req) => {
    const q = parseInput(z.object({ appId: id.optional(), chatId: id }), req.query);
    const s = await scope(req, q.appId);
    if (!(await deps.history.deleteChat({ ...s, chatId: q.chatId }))) throw errors.notFound(`Chat ${q.chatId}`);
    return ok(null);
  });

  app.delete('/api/core/chat/item/delete', { bodyLimit: BODY_LIMIT }, async (req) => {
    const q = parseInput(z.object({ appId: id.optional(), chatId: id, contentId: id }), req.query);
    const s = await scope(req, q.appId);
    if (!(await deps.history.deleteItem({ ...s, chatId: q.chatId }, q.contentId))) throw errors.notFound(`Chat item ${q.contentId}`);
    return ok(null);
  });

  app.delete('/api/core/chat/clearHistories', { bodyLimit: BODY_LIMIT }, async (req) => {
    const q = parseInput(z.object({ appId: id.optional() }), req.query);
    const s = await scope(req, q.appId);
    return ok({ deleted: await deps.history.clearChats(s.teamId, s.appId) });
  });
}
