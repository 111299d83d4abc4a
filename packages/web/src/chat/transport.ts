// How a chat reaches the platform: as the signed-in user for one of the
// team's applications (session cookie + CSRF token, ?appId=), or as a visitor
// of a share link (shareId + the visitor's outLinkUid, and their token where
// the link has a sign-in check; no cookie). The chat panel is the same for both.
import type { ChatRecordsBody, FeedbackBody, HistoriesBody, StopAnswerBody } from '@kbchat/contracts';
import { api, csrfHeader, withQuery, type ChatInit, type GatewayCalls, type Page, type PublicChatHistory, type PublicChatItem } from '../api';
import type { ChatMessage } from './messages-model';

export type HistoryEntry = Pick<PublicChatHistory, 'chatId' | 'title' | 'updateTime'>;

export interface ChatTransport {
  /** The start of its queries' keys: whose chats they are (['chats', {appId}] or a visitor's ['chats', {shareId, outLinkUid}]). */
  key: readonly unknown[];
  /** POSTs a chat body; the caller reads the stream. */
  send(body: Record<string, unknown>, signal: AbortSignal): Promise<Response>;
  /** The caller's chats, newest first, a page at a time. */
  histories(offset: number, pageSize: number, signal?: AbortSignal): Promise<Page<HistoryEntry>>;
  records(chatId: string): Promise<ChatMessage[]>;
  /** A stored chat's variables (none for a new one). */
  variables(chatId: string): Promise<Record<string, string>>;
  remove(chatId: string): Promise<void>;
  removeItem(chatId: string, dataId: string): Promise<void>;
  feedback(chatId: string, dataId: string, feedback: { good?: string; bad?: string }): Promise<void>;
  /** Stops a running answer; what it made is kept, as stopped. */
  stop(chatId: string, dataId: string): Promise<void>;
  /** The gateway's record of a stored answer's model calls (channel, latency, cost): the team's, never a visitor's. */
  modelCalls(chatId: string, dataId: string): Promise<GatewayCalls>;
}

function toMessage(i: PublicChatItem): ChatMessage {
  const text = i.value.map((v) => v.text.content).join('');
  return {
    id: i.dataId,
    role: i.obj === 'Human' ? 'user' : 'assistant',
    text,
    records: Array.isArray(i.responseData) ? (i.responseData as ChatMessage['records']) : undefined,
    feedback: i.userGoodFeedback ? { good: i.userGoodFeedback } : i.userBadFeedback ? { bad: i.userBadFeedback } : undefined,
    ...(i.annotation ? { annotation: i.annotation } : {}),
    ...(i.status === 'running' ? { running: true } : {}),
    ...(i.status === 'stopped' ? { stopped: true } : {}),
    ...(i.status === 'interrupted' ? { interrupted: true } : {}),
    ...(i.status === 'failed' ? { error: { message: i.error?.message ?? '', requestId: i.error?.requestId ?? null } } : {}),
  };
}

/** The form edits text: a value stored by an API caller as a number or a list is shown as text. */
function textValues(v: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)]));
}

type Call = <T>(path: string, init?: { method?: string; json?: unknown; signal?: AbortSignal }) => Promise<T>;

/**
 * api() without the session cookie: a share link's visitor is nobody signed
 * in, even in a browser that has a session here (the platform would take the
 * cookie for the caller and ask which application).
 */
export const anonymousApi: Call = <T>(path: string, init: { method?: string; json?: unknown; signal?: AbortSignal } = {}) =>
  api<T>(path, { ...init, credentials: 'omit' });

/** `listed`: which chats the list shows (the signed-in page lists the team's own, not its visitors'). */
function transport(
  who: Record<string, string>,
  chatPath: string,
  call: Call,
  auth: { credentials: RequestCredentials; headers: () => Record<string, string> },
  listed: Record<string, string> = {},
): Omit<ChatTransport, 'modelCalls'> {
  return {
    key: ['chats', who],
    send: (body, signal) =>
      fetch(chatPath, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth.headers() },
        credentials: auth.credentials,
        body: JSON.stringify({ ...body, ...who }),
        signal,
      }),
    histories: (offset, pageSize, signal) =>
      call<Page<PublicChatHistory>>('/api/core/chat/getHistories', {
        json: { ...who, ...listed, offset, pageSize } satisfies HistoriesBody,
        signal,
      }),
    records: (chatId) =>
      call<Page<PublicChatItem>>('/api/core/chat/getPaginationRecords', { json: { ...who, chatId, pageSize: 500 } satisfies ChatRecordsBody }).then((r) =>
        r.list.map(toMessage),
      ),
    variables: (chatId) => call<ChatInit>(withQuery('/api/core/chat/init', { ...who, chatId })).then((r) => textValues(r.variables)),
    remove: (chatId) => call(withQuery('/api/core/chat/delHistory', { ...who, chatId }), { method: 'DELETE' }).then(() => undefined),
    removeItem: (chatId, dataId) =>
      call(withQuery('/api/core/chat/item/delete', { ...who, chatId, contentId: dataId }), { method: 'DELETE' }).then(() => undefined),
    feedback: (chatId, dataId, f) =>
      call('/api/core/chat/feedback/updateUserFeedback', {
        json: { ...who, chatId, dataId, userGoodFeedback: f.good ?? '', userBadFeedback: f.bad ?? '' } satisfies FeedbackBody,
      }).then(() => undefined),
    stop: (chatId, dataId) => call('/api/core/chat/item/stop', { json: { ...who, chatId, dataId } satisfies StopAnswerBody }).then(() => undefined),
  };
}

/** The signed-in user chatting with one of the team's applications. */
export function sessionTransport(appId: string): ChatTransport {
  return {
    ...transport({ appId }, withQuery('/api/v1/chat/completions', { appId }), api, { credentials: 'same-origin', headers: csrfHeader }, { source: 'online' }),
    modelCalls: (chatId, dataId) => api<GatewayCalls>(withQuery('/api/core/chat/modelCalls', { appId, chatId, dataId })),
  };
}

/**
 * A visitor of a share link: no cookie; the shareId also goes in the query, so the platform knows the link before it reads the body.
 * `authToken`: the visitor's token for a link with a sign-in check (its hook), sent with every call beside the shareId.
 */
export function shareTransport(shareId: string, outLinkUid: string, authToken?: string): ChatTransport {
  const who = { shareId, outLinkUid, ...(authToken ? { authToken } : {}) };
  return {
    ...transport(who, withQuery('/api/v1/chat/completions', { shareId }), anonymousApi, { credentials: 'omit', headers: () => ({}) }),
    // Channels and costs are the operator's business: a visitor sees what the answer itself carries.
    modelCalls: async () => ({ calls: [] }),
  };
}
