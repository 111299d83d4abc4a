// One chat turn of an application around ChatService.run: its history (a
// stored chat's when a chatId names one), the question and a running answer
// stored before any model is called, the answer recorded as it is made and
// stopped when its asker asks, and what its model calls cost read later. The
// chat endpoint (routes.ts) and the application's MCP server (mcp-server/)
// both run a turn through this, so that a turn is stored and charged alike
// whichever way it was asked. No HTTP here: each caller shapes the outcome.
import type { App } from '../apps/service.js';
import type { GatewayError } from '../gateway-client/index.js';
import type { PlatformError } from '../http/errors.js';
import { newId, type KeyCaller } from '../keys/auth.js';
import type { ShareCaller, ShareService } from '../share/service.js';
import type { AnswerCosts } from './answer-costs.js';
import { AnswerRecorder, type RunningAnswers } from './answer-recorder.js';
import type { ChatHistoryStore, Visitor } from './history-store.js';
import type { ChatService, ChatSink, ChatTurnResult } from './pipeline.js';
import type { ChatTurn } from './prompt.js';

/** Who chats with which application: an application key's, a session's (?appId=) or a share link's visitor. */
export type AppCaller = KeyCaller & { appId: string; visitor?: Visitor; hook?: ShareCaller['hook'] };

/** Stored turns loaded for a chatId (the prompt then keeps what fits the model). */
const HISTORY_ITEMS = 40;

export const noopSink: ChatSink = { status() {}, answer() {}, fastAnswer() {}, variables() {}, toolCall() {}, toolResponse() {} };

export interface TurnDeps {
  chat: ChatService;
  history: ChatHistoryStore;
  /** The answers this process is making (a stop request aborts one here). */
  running: RunningAnswers;
  share: ShareService;
  /** Reads a stored answer's cost from the gateway's log once it is there. */
  costs?: AnswerCosts;
}

/** Where a turn writes what an operator should see (pino's warn, as req.log has it). */
export interface TurnLog {
  warn(obj: object, msg: string): void;
}

export interface TurnRequest {
  caller: AppCaller;
  app: App;
  question: string;
  /** A stored chat: its turns are the history, and this turn is added to it. */
  chatId?: string;
  /** The conversation before the question, read only when no chatId names a stored one. */
  messages: ChatTurn[];
  /** This turn's variables: they override a stored chat's by name. */
  variables?: Record<string, unknown> | null;
  /** The stored answer's id (FastGPT's responseChatItemId), else a new one. */
  answerId?: string;
  /** What streams out while the turn runs; nothing by default. */
  sink?: ChatSink;
  stream: boolean;
  requestId: string;
  /** An error as the caller reports it (a gateway 401 is about the platform's own token: chat/routes.ts chatError). */
  toError(err: unknown): PlatformError;
  log: TurnLog;
}

export type TurnOutcome =
  | { status: 'done'; result: ChatTurnResult }
  /** Stopped by its asker: what was made so far. */
  | { status: 'stopped'; content: string }
  | { status: 'failed'; cause: unknown; error: PlatformError };

export interface ChatTurnRun {
  /** The asker went away: an answer nobody can read (not stored) is cancelled; a stored one goes on unless `stopStored`. */
  clientGone(stopStored: boolean): void;
  /** Runs the turn; never throws (a failure is an outcome, recorded on the stored answer). */
  run(): Promise<TurnOutcome>;
}

/**
 * Checks the question and, with a chatId, stores it with a running answer
 * before any model is called. Throws (a 400, a store error) before anything
 * of the turn has run; after that, run() reports every outcome.
 */
export async function beginChatTurn(deps: TurnDeps, t: TurnRequest): Promise<ChatTurnRun> {
  const { caller, app, question } = t;
  // The chat log tells where a chat came from: a visitor's link, the web app (a session) or an application key.
  const source = caller.visitor ? 'share' : caller.keyId === null ? 'online' : 'api';
  const ref = t.chatId ? ({ teamId: caller.teamId, appId: app.id, chatId: t.chatId, visitor: caller.visitor, source } as const) : undefined;
  // With a chatId the stored chat is the history; without, the messages before the question are.
  const stored = ref ? await deps.history.recentItems(ref, HISTORY_ITEMS) : undefined;
  const history: ChatTurn[] = stored ? stored.items.map((i) => ({ role: i.role, content: i.content })) : t.messages;
  // A stored chat keeps its variables: this turn's override them by name.
  const variables = { ...stored?.variables, ...t.variables };
  // A stored chat's question is kept before any model is called (once it is known the model can read it), and its answer recorded as it is made.
  deps.chat.checkQuestion(app, question);
  const answerId = t.answerId ?? newId();
  const chatPk = ref ? await deps.history.beginTurn(ref, { title: question.slice(0, 100), question, questionId: newId(), answerId, variables }) : undefined;
  const onWriteError = (err: unknown) => t.log.warn({ requestId: t.requestId, err }, 'chat: the running answer could not be written');
  const sink = t.sink ?? noopSink;
  const recorder = chatPk === undefined ? undefined : new AnswerRecorder(sink, deps.history, deps.running, chatPk, answerId, onWriteError);
  // The answer's model call is cancelled when its asker stops it, and when the client goes away from a
  // chat that is not stored (nobody could read the answer) or where the caller chooses so.
  const cancel = new AbortController();
  recorder?.signal.addEventListener('abort', () => cancel.abort(), { once: true });
  const turn = deps.chat.forRequest(t.requestId);
  // What the turn's model calls cost, for the stored answer and a visitor's share link (its usage points), whatever
  // the outcome: an answer stopped or failed after its calls spent tokens is charged to the link too.
  let charged = false;
  const chargeCalls = () => {
    if (charged) return;
    charged = true;
    deps.costs?.later({ ...(recorder ? { stored: { chatPk: recorder.chatPk, dataId: answerId } } : {}), shareId: caller.visitor?.shareId }, turn.requestIds());
  };
  const onModelFailure = (step: string, err: GatewayError) =>
    t.log.warn({ requestId: t.requestId, appId: app.id, step, ...err.forLog() }, `chat: the ${step} model call failed: ${err.message}`);

  return {
    clientGone(stopStored) {
      if (!recorder) cancel.abort();
      else if (stopStored) recorder.stop();
    },
    async run() {
      try {
        const input = { question, history, variables, stream: t.stream, signal: cancel.signal, onModelFailure };
        const result = await turn.run(caller, app, input, recorder?.start() ?? sink);
        if (recorder) {
          const figures = {
            annotationId: result.annotationId,
            quoteCount: result.quoteCount,
            ttftMs: recorder.ttftMs,
            tokens: result.usage.total_tokens,
            model: result.annotationId ? undefined : result.model,
          };
          await recorder.finish({ status: 'done', content: result.content, responseData: result.responseData, variables: result.newVariables, figures });
        }
        chargeCalls();
        if (caller.hook) deps.share.finished(caller.hook, result.responseData);
        return { status: 'done', result };
      } catch (err) {
        chargeCalls();
        if (recorder?.signal.aborted) {
          // Stopped by its asker: what was made is kept, and a client still reading gets it as the answer.
          await recorder.finish({ status: 'stopped', content: recorder.text });
          return { status: 'stopped', content: recorder.text };
        }
        const e = t.toError(err);
        await recorder?.finish({ status: 'failed', content: recorder.text, error: { message: e.message, code: e.statusText, requestId: t.requestId } });
        return { status: 'failed', cause: err, error: e };
      }
    },
  };
}
