// An application's chat log for its team (general key or session; never a
// share link's visitor): POST /api/core/app/getChatLogs (chats by filter,
// paged in SQL), GET /api/core/app/exportChatLogs (every message of them as
// CSV or JSON Lines, streamed) and GET /api/core/app/stats (its figures).
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import {
  appStatsQuery,
  appStatsSchema,
  chatLogPageSchema,
  chatLogsBody as logsBody,
  envelopeOf,
  EXPORT_COLUMNS,
  exportChatLogsQuery,
  type ExportedMessage,
  type PublicChatLog,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import { ok } from '../datasets/routes.js';
import { authenticated } from '../http/caller.js';
import { attachment, CSV_BOM, csvLine } from '../http/csv.js';
import type { ChatLogFilter, ChatLogService } from './service.js';
import type { ChatLogRow } from './store.js';

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

function filterOf(q: {
  dateStart?: number | null;
  dateEnd?: number | null;
  feedback?: ChatLogFilter['feedback'];
  source?: ChatLogFilter['source'];
  shareId?: string;
  searchText?: string;
}): ChatLogFilter {
  return {
    from: q.dateStart ?? undefined,
    to: q.dateEnd ?? undefined,
    feedback: q.feedback,
    source: q.source,
    shareId: q.shareId,
    searchText: q.searchText || undefined,
  };
}

export const chatLogsPlugin: FastifyPluginAsync<{ auth: RequestAuth; chatLog: ChatLogService }> = async (fastify, { auth, chatLog }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => auth.general(req)),
  );

  app.post(
    '/api/core/app/getChatLogs',
    { bodyLimit: BODY_LIMIT, schema: { body: logsBody, response: { 200: envelopeOf(chatLogPageSchema) } } },
    async (req) => {
      const b = req.body;
      const { rows, total } = await chatLog.page(req.caller, b.appId, filterOf(b), b.offset, b.pageSize);
      return ok({ list: rows.map(publicChatLog), total });
    },
  );

  app.get(
    '/api/core/app/exportChatLogs',
    {
      schema: {
        querystring: exportChatLogsQuery,
        description:
          'Every message of the chats the filters select, a chat at a time, streamed: CSV (UTF-8 with BOM, formula-like cells prefixed with an apostrophe) or JSON Lines',
      },
    },
    async (req, reply) => {
      const q = req.query;
      const batches = await chatLog.messages(req.caller, q.appId, filterOf(q));
      // The first batch is read before the answer starts: a store that fails now is an error answer, not a cut-off file.
      const first = await batches.next();
      const csv = q.format === 'csv';
      const text = (batch: ExportedMessage[]) => batch.map((m) => (csv ? csvLine(EXPORT_COLUMNS.map((k) => m[k])) : `${JSON.stringify(m)}\n`)).join('');
      async function* lines() {
        if (csv) yield CSV_BOM + csvLine(EXPORT_COLUMNS);
        if (!first.done) yield text(first.value);
        for await (const batch of batches) yield text(batch);
      }
      const day = new Date().toISOString().slice(0, 10);
      reply
        .header('content-type', csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('content-disposition', attachment(`chat-log-${q.appId}-${day}.${csv ? 'csv' : 'jsonl'}`));
      return reply.send(Readable.from(lines()));
    },
  );

  app.get('/api/core/app/stats', { schema: { querystring: appStatsQuery, response: { 200: envelopeOf(appStatsSchema) } } }, async (req) =>
    ok(await chatLog.stats(req.caller, req.query.appId, req.query)),
  );
};
