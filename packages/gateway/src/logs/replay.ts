// Replays a logged request: the body a failed request sent upstream (kept in
// its log row) goes through the relay again, as the same token, under a new
// request id, and the answer is captured instead of sent anywhere. The replay
// is billed and logged like any request (the relay does both). Knows no HTTP.
import type { ReplayResult } from '@kbchat/contracts';
import { createSseReader, newRequestId } from '@kbchat/shared';
import type { Caller } from '../accounts/auth.js';
import { parseIpAllow } from '../accounts/auth.js';
import type { AccountsStore } from '../accounts/store.js';
import { errors, GatewayError } from '../errors.js';
import { relayChat } from '../relay/chat.js';
import { ClientSignal, type RelayContext, type RelayDeps, type Responder } from '../relay/context.js';
import { relayEmbeddings, relayRerank } from '../relay/json-endpoints.js';
import { KEPT_BODY_MAX_CHARS } from '../relay/run.js';
import type { TokenRow, UserRow } from '../store/schema.js';
import type { LogsStore } from './store.js';

export type { ReplayResult };

export interface ReplayDeps {
  logsStore: LogsStore;
  accountsStore: AccountsStore;
  relay: RelayDeps;
}

type Handler = (deps: RelayDeps, ctx: RelayContext, body: unknown, r: Responder) => Promise<void>;

const handlers: Record<string, Handler> = { chat: relayChat, embeddings: relayEmbeddings, rerank: relayRerank };

/** A Responder that keeps the answer: a JSON status and text, or the stream's data payloads. */
export class BufferingResponder implements Responder {
  status = 0;
  text = '';
  readonly payloads: string[] = [];
  ended = false;
  private streaming = false;
  private readonly reader = createSseReader((data) => this.payloads.push(data));

  json(status: number, text: string): void {
    this.status = status;
    this.text = text;
  }

  startStream(): void {
    if (this.streaming) return;
    this.streaming = true;
    this.status = 200;
  }

  write(text: string): void {
    this.reader.feed(text);
  }

  end(text?: string): void {
    if (text) this.reader.feed(text);
    this.ended = true;
  }

  get started(): boolean {
    return this.streaming;
  }
}

function parseMaybe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The caller a token is, in the shape accounts/auth.ts gives the relay (the IP allow-list is not checked on a replay). */
export function callerOf(token: TokenRow, user: UserRow): Caller {
  let models: Set<string> | null = null;
  if (token.models) {
    const list = JSON.parse(token.models) as string[];
    if (list.length) models = new Set(list);
  }
  let ipAllow: Caller['ipAllow'] = null;
  try {
    ipAllow = parseIpAllow(token.ip_allow);
  } catch {
    /* not used by the relay; a bad stored list must not block the replay */
  }
  return { token, user, models, ipAllow };
}

async function originalCaller(deps: ReplayDeps, tokenId: number | null): Promise<Caller> {
  if (tokenId === null) throw errors.conflict('The original request has no token to replay it as');
  const token = await deps.accountsStore.tokenById(tokenId);
  if (!token) throw errors.conflict(`Cannot replay: token deleted (token ${tokenId} sent the original request)`);
  const user = await deps.accountsStore.userById(token.user_id);
  if (!user) throw errors.conflict(`Cannot replay: user deleted (user ${token.user_id} owned the token)`);
  if (token.status !== 'enabled') throw errors.conflict(`Cannot replay: token ${token.id} is disabled`);
  if (token.expires_at !== null && Number(token.expires_at) <= Date.now()) throw errors.conflict(`Cannot replay: token ${token.id} has expired`);
  if (user.status !== 'enabled') throw errors.conflict(`Cannot replay: user ${user.id} is disabled`);
  return callerOf(token, user);
}

export async function replayRequest(deps: ReplayDeps, requestId: string, signal: ClientSignal = new ClientSignal()): Promise<ReplayResult> {
  const log = await deps.logsStore.byRequestId(requestId);
  if (!log) throw errors.notFound(`Request ${requestId}`);
  if (!log.request_body) {
    throw errors.conflict(
      `Request ${requestId} has no stored body: only failed requests keep theirs (up to ${KEPT_BODY_MAX_CHARS} characters), so only they can be replayed`,
    );
  }
  const handler = handlers[log.endpoint];
  if (!handler) throw errors.conflict(`Request ${requestId} went to endpoint "${log.endpoint}", which cannot be replayed`);
  let body: unknown;
  try {
    body = JSON.parse(log.request_body);
  } catch {
    throw errors.conflict(`The stored body of request ${requestId} is not valid JSON`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw errors.conflict(`The stored body of request ${requestId} is not a JSON object`);
  // The stored body is what went upstream (the channel's model name); routing needs the client's.
  const replayBody = { ...(body as Record<string, unknown>), model: log.model };
  const caller = await originalCaller(deps, log.token_id === null ? null : Number(log.token_id));

  const id = newRequestId();
  const ctx: RelayContext = { requestId: id, caller, startedAt: Date.now(), signal, recorded: false };
  const responder = new BufferingResponder();
  try {
    await handler(deps.relay, ctx, replayBody, responder);
  } catch (err) {
    const e = err instanceof GatewayError ? err : errors.internal((err as Error).message);
    const envelope = e.toBody(id);
    if (responder.started) responder.payloads.push(JSON.stringify(envelope));
    else return { request_id: id, original_request_id: requestId, status: e.status, stream: false, response: envelope };
  }
  if (responder.started) {
    return { request_id: id, original_request_id: requestId, status: responder.status, stream: true, response: responder.payloads.map(parseMaybe) };
  }
  return { request_id: id, original_request_id: requestId, status: responder.status, stream: false, response: parseMaybe(responder.text) };
}
