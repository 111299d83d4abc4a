// An MCP server as a tool source, through the official SDK's Client: Streamable
// HTTP first, and the older HTTP+SSE transport when the server answers that
// with a 4xx other than 401/403 (the SDK's backwards-compatibility rule). A
// connection lives for one listing or one call and is always closed: nothing
// is kept open between a chat's calls.
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { fetchFailure, guardedFetch, shownUrl, ToolFetchError, type GuardOptions } from './fetch.js';
import type { StoredTool } from './tables.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

export type McpTransportKind = 'streamableHttp' | 'sse';

export interface McpTarget {
  url: string;
  headers: Record<string, string>;
  /** The transport that worked last; absent: found out (Streamable HTTP, then SSE). */
  transport?: McpTransportKind;
}

/** At most this many pages of tools/list, and tools kept. */
const MAX_PAGES = 20;
export const MAX_TOOLS = 500;

/** A failure of the server, not of the network: it answered, with an error (isError, a JSON-RPC error). */
export class McpToolError extends Error {}

/** The tools the server lists, and the transport that reached it. */
export async function listMcpTools(target: McpTarget, opts: GuardOptions, signal?: AbortSignal): Promise<{ tools: StoredTool[]; transport: McpTransportKind }> {
  const { value, transport } = await withClient(target, opts, signal, async (client, options) => {
    const tools: StoredTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page++) {
      const r = await client.listTools(cursor ? { cursor } : undefined, options);
      for (const t of r.tools) tools.push({ name: t.name, description: t.description ?? t.title ?? '', inputSchema: t.inputSchema as Record<string, unknown> });
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return tools.slice(0, MAX_TOOLS);
  });
  return { tools: value, transport };
}

/** The tool's result as text; McpToolError when the tool says it failed. */
export async function callMcpTool(target: McpTarget, name: string, args: Record<string, unknown>, opts: GuardOptions, signal?: AbortSignal): Promise<string> {
  const { value } = await withClient(target, opts, signal, async (client, options) => {
    const result = (await client.callTool({ name, arguments: args }, undefined, options)) as Record<string, unknown>;
    const text = resultText(result);
    if (result.isError) throw new McpToolError(text || 'the tool reported an error without a message');
    return text;
  });
  return value;
}

async function withClient<T>(
  target: McpTarget,
  opts: GuardOptions,
  signal: AbortSignal | undefined,
  work: (client: Client, options: { signal?: AbortSignal; timeout: number }) => Promise<T>,
): Promise<{ value: T; transport: McpTransportKind }> {
  // No pause inside the event stream ends it: the request's own timeout bounds each exchange,
  // and one deadline bounds it all, the connection included (an SSE server that opens its
  // stream and never sends its endpoint would otherwise hold the chat for ever: the SDK's
  // timeout does not cover that wait).
  const net = guardedFetch({ ...opts, bodyTimeoutMs: 0 });
  const deadline = AbortSignal.timeout(2 * opts.timeoutMs);
  const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const stopped = new Promise<never>((_, reject) =>
    stop.addEventListener('abort', () => reject(signal?.aborted ? (signal.reason ?? new Error('aborted')) : timedOut(target.url, 2 * opts.timeoutMs)), {
      once: true,
    }),
  );
  stopped.catch(() => {});
  const options = { signal: stop, timeout: opts.timeoutMs };
  const kinds: McpTransportKind[] = target.transport ? [target.transport] : ['streamableHttp', 'sse'];
  const tried: string[] = [];
  try {
    for (const kind of kinds) {
      const client = new Client({ name: 'kbchat', version });
      try {
        await Promise.race([client.connect(transportOf(kind, target, net.fetch), options), stopped]);
        return { value: await Promise.race([work(client, options), stopped]), transport: kind };
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        if (deadline.aborted) throw timedOut(target.url, 2 * opts.timeoutMs);
        // Only a server that does not speak Streamable HTTP (a 4xx to its POST, but a refusal of the headers) is tried over SSE.
        const status = err instanceof StreamableHTTPError ? err.code : undefined;
        if (kind === 'streamableHttp' && kinds.length > 1 && status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403) {
          tried.push(`Streamable HTTP answered HTTP ${status}`);
          continue;
        }
        throw described(err, target.url, tried, opts.timeoutMs);
      } finally {
        await client.close().catch(() => {});
      }
    }
    throw new ToolFetchError('unreachable', `${shownUrl(target.url)} is not an MCP server: ${tried.join('; ')}.`);
  } finally {
    await net.close();
  }
}

function transportOf(kind: McpTransportKind, target: McpTarget, fetch: ReturnType<typeof guardedFetch>['fetch']): Transport {
  const url = new URL(target.url);
  const requestInit = { headers: target.headers };
  // No reconnection: a dropped stream fails the one exchange it carried.
  if (kind === 'streamableHttp')
    return new StreamableHTTPClientTransport(url, {
      requestInit,
      fetch,
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
    });
  return new SSEClientTransport(url, { requestInit, fetch });
}

const timedOut = (url: string, ms: number) => new ToolFetchError('timeout', `${shownUrl(url)} did not answer within ${Math.round(ms / 100) / 10} s.`);

/** What went wrong, in words: the address rule, the HTTP status, the silence, or the server's own error. */
function described(err: unknown, link: string, tried: string[], timeoutMs: number): Error {
  const url = shownUrl(link);
  const before = tried.length ? ` (${tried.join('; ')})` : '';
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return new ToolFetchError('timeout', `${url} did not answer within ${Math.round(timeoutMs / 100) / 10} s.`);
    // A JSON-RPC error of the server (an unknown tool, invalid arguments): the server's answer.
    return new McpToolError(err.message);
  }
  if (err instanceof StreamableHTTPError || err instanceof SseError) {
    const status = err.code;
    const why = status === 401 || status === 403 ? ' (check the headers: the server refused them)' : '';
    const code = typeof status === 'number' && status > 0 ? `HTTP ${status}` : 'an error';
    return new ToolFetchError('unreachable', `${url} answered ${code}${why}${before}: ${firstLine(err.message)}`);
  }
  const failure = fetchFailure(err, link);
  if (failure instanceof ToolFetchError) return failure;
  return new ToolFetchError('unreachable', `${url}: ${firstLine((err as Error)?.message ?? String(err))}${before}`);
}

const firstLine = (s: string) =>
  s
    .split('\n')[0]!
    .slice(0, 300)
    .replace(/[:\s]+$/, '');

/** A call's content as text: text parts as they are, the others named (an image, a resource), or the structured result. */
function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const parts = content.map((c) => {
    if (c.type === 'text' && typeof c.text === 'string') return c.text;
    if (c.type === 'resource' && c.resource && typeof (c.resource as { text?: unknown }).text === 'string') return (c.resource as { text: string }).text;
    if (c.type === 'resource_link' || c.type === 'resource')
      return `[resource ${String((c as { uri?: unknown }).uri ?? (c.resource as { uri?: unknown })?.uri ?? '')}]`;
    return `[${String(c.type)}${typeof c.mimeType === 'string' ? ` ${c.mimeType}` : ''}]`;
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (parts.length === 0 && 'toolResult' in result) return JSON.stringify(result.toolResult);
  return parts.join('\n');
}
