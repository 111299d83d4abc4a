// The gateway's side of an answer's model calls: for the request ids a chat
// record (or a searchTest answer) names, the channel that served each, what
// it cost and how long the gateway took, read from the gateway's request log
// (its books: the cost there is what was charged). Read when a trace is
// opened, not when the answer is made: the gateway writes its log rows in
// batches, and reading them would slow every answer.
import type { GatewayCall, GatewayCalls } from '@kbchat/contracts';
import { GatewayError, type GatewayClient, type GatewayLogRow } from '../gateway-client/index.js';

export type { GatewayCall, GatewayCalls };

/** The calls of one answer: a handful; a whole search with extension and rerank stays well below. */
export const MAX_TRACED_CALLS = 32;

/** The gateway request ids a stored answer's steps name (each step's own, and its modelCalls'), first seen first. */
export function requestIdsOf(records: unknown): string[] {
  const ids = new Set<string>();
  for (const r of Array.isArray(records) ? records : []) {
    if (!r || typeof r !== 'object') continue;
    const step = r as { requestId?: unknown; modelCalls?: unknown };
    if (typeof step.requestId === 'string') ids.add(step.requestId);
    for (const c of Array.isArray(step.modelCalls) ? step.modelCalls : []) if (c && typeof c.requestId === 'string') ids.add(c.requestId);
  }
  return [...ids].slice(0, MAX_TRACED_CALLS);
}

export async function gatewayCalls(gateway: GatewayClient, requestIds: string[]): Promise<GatewayCalls> {
  try {
    const rows = await Promise.all(requestIds.map((id) => gateway.requestLog(id)));
    const found = rows.filter((r): r is GatewayLogRow => !!r);
    const channelIds = [...new Set(found.map((r) => r.channelId).filter((id): id is number => id !== null))];
    const names = new Map(await Promise.all(channelIds.map(async (id) => [id, (await gateway.channelName(id)) ?? null] as const)));
    return { calls: found.map((r) => ({ ...r, channelName: r.channelId === null ? null : (names.get(r.channelId) ?? null) })) };
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    if (err.status === 401 || err.status === 403) {
      return {
        calls: [],
        unavailable: `the gateway shows its request logs to administrators only, and the platform's gateway token (GATEWAY_TOKEN) is not an administrator's: ${err.message}`,
      };
    }
    return { calls: [], unavailable: err.message };
  }
}
