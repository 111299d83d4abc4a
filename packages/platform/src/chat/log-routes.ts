// POST /api/core/app/getChatLogs: an application's chat log for its team
// (general key or session): every chat of the app, visitors' included, newest
// first, with where it came from and its counts. Paged in SQL.
import type { FastifyPluginAsync } from 'fastify';
import { chatLogPageSchema, chatLogsBody as logsBody, envelopeOf, type PublicChatLog } from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { AppsService } from '../apps/service.js';
import { ok } from '../datasets/routes.js';
import { errors } from '../http/errors.js';
import { authenticated } from '../http/caller.js';
import type { ChatHistoryStore, ChatLogRow } from './history-store.js';

const BODY_LIMIT = 64 * 1024;

/** One chat of the log, in FastGPT's field names; a visitor's chat names its link and visitor. */
export function publicChatLog(c: ChatLogRow): PublicChatLog {
  return {
    _id: String(c.id),
    id: c.chat_id,
    chatId: c.chat_id,
    title: c.title,
    source: c.source,
    ...(c.share_id ? { shareId: c.share_id, outLinkUid: c.out_link_uid ?? '' } : {}),
    messageCount: c.message_count,
    userGoodFeedbackCount: c.good_feedback,
    userBadFeedbackCount: c.bad_feedback,
    createTime: new Date(Number(c.created_at)).toISOString(),
    updateTime: new Date(Number(c.updated_at)).toISOString(),
  };
}

/** General keys or a session, checked before the body is read. */
export const chatLogsPlugin: FastifyPluginAsync<{ auth: RequestAuth; apps: AppsService; history: ChatHistoryStore }> = async (fastify, deps) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => deps.auth.general(req)),
  );

  app.post(
    '/api/core/app/getChatLogs',
    { bodyLimit: BODY_LIMIT, schema: { body: logsBody, response: { 200: envelopeOf(chatLogPageSchema) } } },
    async (req) => {
      const caller = req.caller;
      const b = req.body;
      const from = b.dateStart ?? undefined;
      const to = b.dateEnd ?? undefined;
      if (from !== undefined && to !== undefined && to < from) throw errors.badField('dateEnd', 'is before dateStart');
      await deps.apps.app(caller, b.appId); // 404 for another team's
      const { rows, total } = await deps.history.chatLogs(caller.teamId, b.appId, { offset: b.offset, limit: b.pageSize, from, to });
      return ok({ list: rows.map(publicChatLog), total });
    },
  );
};
