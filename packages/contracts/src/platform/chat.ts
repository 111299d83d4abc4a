// The chat (/api/v1/chat/completions), its history (/api/core/chat/*) and an
// answer's model calls. The chat log, its export and figures: chat-logs.ts.
import { z } from 'zod';
import { id, pageOf } from './common.js';

const contentPart = z.object({ type: z.string(), text: z.string().optional() }).passthrough();
export const chatMessageSchema = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
    content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  })
  .passthrough();
export const chatCompletionsBody = z
  .object({
    chatId: z.string().max(64).nullable().optional(),
    stream: z.boolean().default(false),
    detail: z.boolean().default(false),
    messages: z.array(chatMessageSchema).min(1).max(1000),
    variables: z.record(z.string(), z.unknown()).nullable().optional(),
    responseChatItemId: z.string().min(1).max(64).optional(),
    // A share link's visitor (FastGPT's share page): the link, and the visitor's own id.
    shareId: z.string().min(1).max(64).optional(),
    outLinkUid: z.string().min(1).max(128).optional(),
    /** The visitor's token for a link with a hook (the operator's page gives it). */
    authToken: z.string().min(1).max(4096).optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().nullable().optional(),
  })
  .passthrough();

export type ChatMessage = z.infer<typeof chatMessageSchema>;
export type ChatCompletionsBody = z.input<typeof chatCompletionsBody>;

const page = { offset: z.number().int().min(0).default(0), pageSize: z.number().int().min(1).max(500).default(30) };
/** Who reads: a key or session names the app; a share link's visitor names the link and themselves. */
const who = {
  appId: id.optional(),
  shareId: id.optional(),
  outLinkUid: z.string().min(1).max(128).optional(),
  /** A visitor's token, for a link with a hook: the hook says who the visitor is. */
  authToken: z.string().min(1).max(4096).optional(),
};
// source: only the chats made one way (the web app's chat page lists the team's own, 'online').
export const historiesBody = z.object({ ...who, ...page, source: z.enum(['online', 'api', 'share']).optional() });
export const chatQuery = z.object({ ...who, chatId: id });
export const chatRecordsBody = z.object({ ...who, chatId: id, ...page });
export const chatItemQuery = z.object({ ...who, chatId: id, contentId: id });
export const stopAnswerBody = z.object({ ...who, chatId: id, dataId: id });
export const clearHistoriesQuery = z.object({ appId: id.optional() });
export const feedbackBody = z.object({
  ...who,
  chatId: id,
  dataId: id,
  userGoodFeedback: z.string().max(5000).optional(),
  userBadFeedback: z.string().max(5000).optional(),
});

export type HistoriesBody = z.input<typeof historiesBody>;
export type ChatRecordsBody = z.input<typeof chatRecordsBody>;
export type StopAnswerBody = z.input<typeof stopAnswerBody>;
export type FeedbackBody = z.input<typeof feedbackBody>;

/** GET /api/core/chat/modelCalls. */
export const modelCallsQuery = z.object({ appId: id, chatId: id, dataId: id });

/** Where a chat was started: the web app signed in, an application key, or a share link's visitor. */
export const chatSourceSchema = z.enum(['online', 'api', 'share']);
export type ChatSource = z.infer<typeof chatSourceSchema>;

/** responseData: one record per step of a chat, in FastGPT's field names (runningTime in seconds); each step adds its own fields. */
export const stepRecordSchema = z.looseObject({
  moduleName: z.string(),
  moduleType: z.enum(['annotationReply', 'queryExtension', 'classifyQuestion', 'datasetSearchNode', 'contentExtract', 'chatNode', 'answerNode', 'toolCall']),
  runningTime: z.number(),
  model: z.string().optional(),
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  query: z.string().optional(),
  error: z.string().optional(),
});
export type StepRecord = z.infer<typeof stepRecordSchema>;

export const tokenUsageSchema = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });
export type TokenUsage = z.infer<typeof tokenUsageSchema>;

/** One relayed request as the gateway's request log keeps it. */
export const gatewayLogRowSchema = z.object({
  requestId: z.string(),
  channelId: z.number().nullable(),
  model: z.string(),
  upstreamModel: z.string().nullable(),
  /** Currency units (the gateway's; `costMicros` is exact). */
  cost: z.number(),
  costMicros: z.number(),
  latencyMs: z.number(),
  ttftMs: z.number().nullable(),
  status: z.number(),
  attempts: z.number(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  error: z.string().nullable(),
});
export type GatewayLogRow = z.infer<typeof gatewayLogRowSchema>;

export const gatewayCallSchema = gatewayLogRowSchema.extend({ channelName: z.string().nullable() });
export type GatewayCall = z.infer<typeof gatewayCallSchema>;

/** The gateway's side of an answer's model calls (GET /api/core/chat/modelCalls). */
export const gatewayCallsSchema = z.object({
  /** The calls the gateway's log has, in the order asked; ids it has no row for are left out. */
  calls: z.array(gatewayCallSchema),
  /** Why the gateway's log could not be read (its admin API refused the platform's token, or it did not answer). */
  unavailable: z.string().optional(),
});
export type GatewayCalls = z.infer<typeof gatewayCallsSchema>;

/** A chat in getHistories; the team (not a visitor) also sees which link and visitor a shared one is from. */
export const publicChatHistorySchema = z.object({
  chatId: z.string(),
  appId: z.string(),
  title: z.string(),
  customTitle: z.string(),
  top: z.boolean(),
  updateTime: z.string(),
  source: chatSourceSchema,
  shareId: z.string().optional(),
  outLinkUid: z.string().optional(),
});
export type PublicChatHistory = z.infer<typeof publicChatHistorySchema>;

/** An answer's state; a running answer whose process died is 'interrupted'. */
export const chatItemStatusSchema = z.enum(['running', 'done', 'stopped', 'failed', 'interrupted']);
export type ChatItemStatus = z.infer<typeof chatItemStatusSchema>;

/** A stored question or answer, in FastGPT's shape, with kbchat's answer state. */
export const publicChatItemSchema = z.object({
  _id: z.string(),
  dataId: z.string(),
  obj: z.enum(['Human', 'AI']),
  value: z.array(z.object({ type: z.literal('text'), text: z.object({ content: z.string() }) })),
  status: chatItemStatusSchema,
  /** A failed answer's error. */
  error: z.object({ message: z.string(), code: z.string(), requestId: z.string().optional() }).optional(),
  time: z.string(),
  responseData: z.array(stepRecordSchema).optional(),
  userGoodFeedback: z.string().optional(),
  userBadFeedback: z.string().optional(),
  /** The team's annotation that corrects this answer (never shown to a share link's visitor). */
  annotation: z.object({ id: z.string(), question: z.string(), answer: z.string() }).optional(),
});
export type PublicChatItem = z.infer<typeof publicChatItemSchema>;

export const chatHistoryPageSchema = pageOf(publicChatHistorySchema);
export const chatItemPageSchema = pageOf(publicChatItemSchema);

/** FastGPT's chat init: what a reopened chat needs besides its messages (a chat not stored yet: empty). */
export const chatInitSchema = z.object({ chatId: z.string(), appId: z.string(), title: z.string(), variables: z.record(z.string(), z.unknown()) });
export type ChatInit = z.infer<typeof chatInitSchema>;

/** A stop request: whether it stopped a running answer, and the answer's state now. */
export const answerStoppedSchema = z.object({ stopped: z.boolean(), status: chatItemStatusSchema });

/** clearHistories: how many chats were deleted. */
export const chatsDeletedSchema = z.object({ deleted: z.number() });

/** POST /api/v1/chat/completions without stream: OpenAI's chat.completion, and with detail FastGPT's records of the turn. */
export const chatCompletionSchema = z.object({
  id: z.string().describe('The chatId, or chatcmpl-… for a chat that is not stored'),
  object: z.literal('chat.completion'),
  created: z.number(),
  model: z.string(),
  /** Absent when the answer was stopped (then `stopped` is true). */
  usage: tokenUsageSchema.optional(),
  stopped: z.literal(true).optional().describe('Its asker stopped the answer: what was made so far'),
  choices: z.array(z.object({ message: z.object({ role: z.literal('assistant'), content: z.string() }), finish_reason: z.literal('stop'), index: z.number() })),
  responseData: z.array(stepRecordSchema).optional(),
  newVariables: z.record(z.string(), z.unknown()).optional(),
});
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

/** The application as an OpenAI model: its id is the appId. */
export const appModelSchema = z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string(), name: z.string() });
export type AppModel = z.infer<typeof appModelSchema>;
/** GET /api/v1/models: the key's application as the one model. */
export const appModelListSchema = z.object({ object: z.literal('list'), data: z.array(appModelSchema) });
