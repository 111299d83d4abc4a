// A team's tool sources: added (the source is asked for its tools at once, and
// one that cannot be reached is not kept), listed, refreshed, deleted; and the
// ToolRunner the chat calls tools through. Headers are sealed before they are
// stored and opened only to make a request; the answers show a hint of each.
// Another team's source is a 404. Every request goes through guardedFetch.
import type { CreateToolSourceBody } from '@kbchat/contracts';
import { errors, PlatformError } from '../http/errors.js';
import type { HostResolver } from '../ingest/link.js';
import { newId, type KeyCaller } from '../keys/auth.js';
import { checkedUrl, guardedFetch, shownUrl, ToolFetchError, type GuardOptions } from './fetch.js';
import { callMcpTool, listMcpTools, McpToolError, type McpTransportKind } from './mcp.js';
import { baseUrlOf, callOperation, OpenApiError, openApiTools, parseOpenApi } from './openapi.js';
import type { ToolCallResult, ToolRunner, ToolSpec } from './runner.js';
import { secretHint, type SecretBox } from './secret-box.js';
import type { ToolSourceRow, ToolSourcesStore } from './store.js';
import type { StoredTool } from './tables.js';

export interface ToolSourceSettings {
  /** Sources may be on loopback or private addresses (TOOL_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** A call's limit, and each step's of listing (TOOL_TIMEOUT_MS). */
  timeoutMs: number;
  /** DNS resolution (tests give one). */
  resolve?: HostResolver;
}

/** The most of a call's answer read; the most of a listing's or a document's. */
export const CALL_MAX_BYTES = 1_000_000;
const LIST_MAX_BYTES = 5_000_000;
/** What the model reads of a result at most. */
export const RESULT_MAX_CHARS = 6000;

type CreateInput = Omit<CreateToolSourceBody, 'document'> & { document?: string | Record<string, unknown> };

export class ToolSources implements ToolRunner {
  constructor(
    private readonly store: ToolSourcesStore,
    private readonly box: SecretBox,
    private readonly settings: ToolSourceSettings,
  ) {}

  async create(caller: KeyCaller, input: CreateInput): Promise<string> {
    const headers = input.headers ?? {};
    const listed = await this.listTools({ type: input.type, url: input.url ?? null, document: input.document, baseUrl: input.baseUrl, headers });
    const now = Date.now();
    const id = newId();
    const document = input.document === undefined ? null : typeof input.document === 'string' ? input.document : JSON.stringify(input.document);
    await this.store.insert({
      id,
      team_id: caller.teamId,
      type: input.type,
      name: input.name,
      url: input.url ?? null,
      document,
      base_url: listed.baseUrl ?? null,
      transport: listed.transport ?? null,
      headers_sealed: Object.keys(headers).length ? this.box.seal(JSON.stringify(headers)) : null,
      header_hints: JSON.stringify(Object.entries(headers).map(([name, value]) => ({ name, hint: secretHint(value) }))),
      tools: JSON.stringify(listed.tools),
      listed_at: now,
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  list(caller: KeyCaller): Promise<ToolSourceRow[]> {
    return this.store.list(caller.teamId);
  }

  async detail(caller: KeyCaller, id: string): Promise<ToolSourceRow> {
    const row = await this.store.get(caller.teamId, id);
    if (!row) throw errors.notFound(`Tool source ${id}`);
    return row;
  }

  /** Asks the source for its tools again; a source that cannot be reached keeps the tools it had (and the answer says why). */
  async refresh(caller: KeyCaller, id: string): Promise<ToolSourceRow> {
    const row = await this.detail(caller, id);
    const listed = await this.listTools({
      type: row.type,
      url: row.url,
      document: row.document ?? undefined,
      baseUrl: row.base_url ?? undefined,
      headers: this.headersOf(row),
    });
    const now = Math.max(Date.now(), Number(row.updated_at) + 1);
    await this.store.setTools(caller.teamId, id, {
      tools: JSON.stringify(listed.tools),
      transport: listed.transport ?? null,
      base_url: listed.baseUrl ?? null,
      listed_at: now,
    });
    return this.detail(caller, id);
  }

  async delete(caller: KeyCaller, id: string): Promise<void> {
    if (!(await this.store.delete(caller.teamId, id))) throw errors.notFound(`Tool source ${id}`);
  }

  async resolve(teamId: string, refs: { sourceId: string; name: string }[]): Promise<{ tools: ToolSpec[]; missing: string[] }> {
    const rows = await this.store.some(teamId, [...new Set(refs.map((r) => r.sourceId))]);
    const bySource = new Map(rows.map((r) => [r.id, { row: r, tools: new Map(storedTools(r).map((t) => [t.name, t])) }]));
    const tools: ToolSpec[] = [];
    const missing: string[] = [];
    for (const ref of refs) {
      const source = bySource.get(ref.sourceId);
      const tool = source?.tools.get(ref.name);
      if (!source || !tool) missing.push(`${ref.sourceId}/${ref.name}`);
      else tools.push({ sourceId: ref.sourceId, sourceName: source.row.name, name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
    }
    return { tools, missing };
  }

  async call(teamId: string, tool: ToolSpec, args: unknown, signal?: AbortSignal): Promise<ToolCallResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const fail = (error: string, detail?: string): ToolCallResult => ({
      ok: false,
      text: cut(`The tool ${tool.name} failed: ${error}${detail ? `\n${detail}` : ''}`),
      ms: ms(),
      error,
    });
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    const both = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      signal?.throwIfAborted();
      const row = await this.store.get(teamId, tool.sourceId);
      const stored = row && storedTools(row).find((t) => t.name === tool.name);
      if (!row || !stored) return fail(`the tool is no longer in its source ${tool.sourceName}`);
      const input = argumentsOf(args);
      if (typeof input === 'string') return fail(input);
      const opts = this.guard(CALL_MAX_BYTES);
      const headers = this.headersOf(row);
      if (row.type === 'mcp') {
        const target = { url: row.url!, headers, transport: (row.transport ?? undefined) as McpTransportKind | undefined };
        return { ok: true, text: cut(await callMcpTool(target, tool.name, input, opts, both)), ms: ms() };
      }
      if (!stored.operation || !row.base_url) return fail('the operation is not described in the source');
      const net = guardedFetch(opts);
      try {
        const { status, text } = await callOperation(net.fetch, row.base_url, stored.operation, input, headers, both);
        if (status < 200 || status >= 300) return fail(`HTTP ${status}`, text);
        return { ok: true, text: cut(text), ms: ms() };
      } finally {
        await net.close();
      }
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      if (deadline.aborted || (err instanceof ToolFetchError && err.code === 'timeout')) return fail(`no answer within ${seconds(this.settings.timeoutMs)} s`);
      return fail(messageOf(err));
    }
  }

  private guard(maxBytes: number): GuardOptions {
    return { allowPrivate: this.settings.allowPrivate, timeoutMs: this.settings.timeoutMs, maxBytes, resolve: this.settings.resolve };
  }

  private headersOf(row: ToolSourceRow): Record<string, string> {
    if (!row.headers_sealed) return {};
    try {
      return JSON.parse(this.box.open(row.headers_sealed)) as Record<string, string>;
    } catch (err) {
      throw new PlatformError(500, 'secret_unreadable', `The headers of tool source ${row.id} cannot be read: ${(err as Error).message}`);
    }
  }

  /** The source's tools, asked of it now; every failure is a 4xx that says what to change. */
  private async listTools(s: {
    type: 'mcp' | 'openapi';
    url: string | null;
    document?: string | Record<string, unknown>;
    baseUrl?: string;
    headers: Record<string, string>;
  }): Promise<{ tools: StoredTool[]; transport?: McpTransportKind; baseUrl?: string }> {
    try {
      if (s.type === 'mcp') return await listMcpTools({ url: s.url!, headers: s.headers }, this.guard(LIST_MAX_BYTES));
      const doc = parseOpenApi(s.document ?? (await this.fetchDocument(s.url!, s.headers, s.baseUrl)));
      const baseUrl = baseUrlOf(doc, s.baseUrl, s.url ?? undefined);
      // A base URL the rules refuse is refused now, not at the first call.
      checkedUrl(baseUrl, this.settings.allowPrivate);
      return { tools: openApiTools(doc), baseUrl };
    } catch (err) {
      throw refusal(err, s.type);
    }
  }

  /**
   * The document by its URL, sent the source's headers only when it is on the
   * origin the calls go to (`baseUrl`): the credentials are for the API, not
   * for wherever its document is kept (a repository, a CDN).
   */
  private async fetchDocument(url: string, headers: Record<string, string>, baseUrl?: string): Promise<string> {
    const net = guardedFetch(this.guard(LIST_MAX_BYTES));
    const sameOrigin = baseUrl !== undefined && sameOriginOf(url, baseUrl);
    try {
      const res = await net.fetch(url, {
        headers: { accept: 'application/json, application/yaml, text/yaml, */*;q=0.5', ...(sameOrigin ? headers : {}) },
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      const text = await res.text();
      if (res.status < 200 || res.status >= 300)
        throw new ToolFetchError(
          'unreachable',
          `${shownUrl(url)} answered HTTP ${res.status}${res.status >= 300 && res.status < 400 ? ' (a redirect: give the final address)' : ''}.`,
        );
      return text;
    } finally {
      await net.close();
    }
  }
}

function sameOriginOf(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

function storedTools(row: ToolSourceRow): StoredTool[] {
  return JSON.parse(row.tools) as StoredTool[];
}

/** The model's arguments as an object (a JSON text of one is read), or why they are not. */
function argumentsOf(args: unknown): Record<string, unknown> | string {
  let v = args ?? {};
  if (typeof v === 'string') {
    try {
      v = v.trim() ? JSON.parse(v) : {};
    } catch {
      return 'the arguments are not JSON';
    }
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : 'the arguments must be a JSON object';
}

/** What the model reads: at most RESULT_MAX_CHARS, and it is told when the rest was cut. */
export function cut(text: string): string {
  if (text.length <= RESULT_MAX_CHARS) return text;
  return `${text.slice(0, RESULT_MAX_CHARS)}\n[The result was cut: it has ${text.length} characters, the first ${RESULT_MAX_CHARS} are shown.]`;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

function messageOf(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return 'the source did not answer in time';
  return (err as Error)?.message ?? String(err);
}

/** A source that cannot be used, as the 4xx its creator reads. */
function refusal(err: unknown, type: 'mcp' | 'openapi'): Error {
  if (err instanceof PlatformError) return err;
  if (err instanceof ToolFetchError) {
    if (err.code === 'forbidden_address') return new PlatformError(400, 'forbidden_address', err.message);
    if (err.code === 'invalid_url') return errors.badField('url', err.message);
    return new PlatformError(422, 'tool_source_unreachable', `The ${type === 'mcp' ? 'MCP server' : 'OpenAPI source'} cannot be used: ${err.message}`);
  }
  if (err instanceof OpenApiError) return new PlatformError(422, 'invalid_openapi', `The OpenAPI document cannot be used: ${err.message}`);
  if (err instanceof McpToolError) return new PlatformError(422, 'tool_source_unreachable', `The MCP server refused to list its tools: ${err.message}`);
  return new PlatformError(422, 'tool_source_unreachable', `The tool source cannot be used: ${messageOf(err)}`);
}
