// An HTTP API described by an OpenAPI 3 document as a tool source: each
// operation a tool, named by its operationId (or its method and path made
// into a name), whose input schema holds its path, query and header
// parameters and, under `body` (or `requestBody` where a parameter is named
// body), its JSON body. Local $refs are inlined; a reference to itself is left
// open ({}). Cookie parameters, and operations whose body is not JSON, are
// left out: a model cannot fill them in usefully.
import { parse as parseYaml } from 'yaml';
import type { GuardedFetch } from './fetch.js';
import type { OperationPlan, StoredTool } from './tables.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const MAX_DEPTH = 12;
export const MAX_OPERATIONS = 500;

/** The document cannot be used, in words that say what to change. */
export class OpenApiError extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A pasted or fetched document: JSON, or YAML, or an object already. */
export function parseOpenApi(input: string | Json): Json {
  let doc: unknown = input;
  if (typeof input === 'string') {
    try {
      doc = JSON.parse(input);
    } catch {
      try {
        doc = parseYaml(input);
      } catch (err) {
        throw new OpenApiError(`the document is neither JSON nor YAML (${(err as Error).message.split('\n')[0]})`);
      }
    }
  }
  if (!isObject(doc)) throw new OpenApiError('the document is not an object');
  if (typeof doc.swagger === 'string') throw new OpenApiError(`it is a Swagger ${doc.swagger} document; convert it to OpenAPI 3 first`);
  if (typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.'))
    throw new OpenApiError("it has no 'openapi: 3.x' field: only OpenAPI 3 documents are read");
  if (!isObject(doc.paths)) throw new OpenApiError("it has no 'paths'");
  return doc;
}

/** The base URL: the one given, else the document's first server (its variables at their defaults, a relative one against the document's URL). */
export function baseUrlOf(doc: Json, given: string | undefined, documentUrl: string | undefined): string {
  if (given) return given.replace(/\/+$/, '');
  const server = Array.isArray(doc.servers) && isObject(doc.servers[0]) ? doc.servers[0] : undefined;
  let url = typeof server?.url === 'string' ? server.url : undefined;
  if (!url) throw new OpenApiError("the document names no server: give 'baseUrl'");
  const vars = isObject(server!.variables) ? server!.variables : {};
  url = url.replace(/\{([^}]+)\}/g, (_, name: string) => String((vars[name] as Json | undefined)?.default ?? ''));
  try {
    return new URL(url, documentUrl).href.replace(/\/+$/, '');
  } catch {
    throw new OpenApiError(`its server ${url} is relative and the document was pasted: give 'baseUrl'`);
  }
}

/** Each operation as a tool. */
export function openApiTools(doc: Json): StoredTool[] {
  const tools: StoredTool[] = [];
  const names = new Set<string>();
  for (const [path, rawItem] of Object.entries(doc.paths as Json)) {
    const item = deref(doc, rawItem);
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = deref(doc, item[method]);
      if (!isObject(op)) continue;
      const tool = operationTool(doc, path, method, item, op);
      if (!tool) continue;
      tool.name = unique(tool.name, names);
      tools.push(tool);
      if (tools.length >= MAX_OPERATIONS) return tools;
    }
  }
  if (tools.length === 0) throw new OpenApiError('it describes no operation that can be called with JSON');
  return tools;
}

function operationTool(doc: Json, path: string, method: string, item: Json, op: Json): StoredTool | undefined {
  // Operation-level parameters replace path-level ones of the same name and place.
  const byKey = new Map<string, Json>();
  for (const raw of [...asArray(item.parameters), ...asArray(op.parameters)]) {
    const p = deref(doc, raw);
    if (isObject(p) && typeof p.name === 'string' && typeof p.in === 'string') byKey.set(`${p.in}:${p.name}`, p);
  }
  const properties: Json = {};
  const required: string[] = [];
  const params: OperationPlan['params'] = [];
  for (const p of byKey.values()) {
    if (p.in !== 'path' && p.in !== 'query' && p.in !== 'header') continue;
    const name = p.name as string;
    const isRequired = p.in === 'path' || p.required === true;
    properties[name] = withDescription(inline(doc, p.schema ?? {}, 0, []), p.description);
    if (isRequired) required.push(name);
    params.push({ name, in: p.in, required: isRequired });
  }
  let bodyArg: string | undefined;
  let bodyRequired = false;
  const body = deref(doc, op.requestBody);
  if (isObject(body) && isObject(body.content)) {
    const type = Object.keys(body.content).find((t) => /^application\/([\w.-]+\+)?json\b/i.test(t));
    if (!type) return undefined;
    bodyArg = byKey.has('path:body') || byKey.has('query:body') || byKey.has('header:body') ? 'requestBody' : 'body';
    properties[bodyArg] = withDescription(inline(doc, (body.content[type] as Json | undefined)?.schema ?? {}, 0, []), body.description ?? 'The JSON body');
    if (body.required === true) required.push(bodyArg);
    bodyRequired = body.required === true;
  }
  const text = [op.summary, op.description].filter((s): s is string => typeof s === 'string' && s.trim() !== '').join('\n');
  return {
    name: typeof op.operationId === 'string' && op.operationId.trim() ? toolName(op.operationId) : toolName(`${method}_${path}`),
    description: (text || `${method.toUpperCase()} ${path}`).slice(0, 1000),
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}) },
    operation: { method: method.toUpperCase(), path, params, ...(bodyArg ? { bodyArg, bodyRequired } : {}) },
  };
}

/** A name a model's function may have: letters, digits, _ and -, at most 64. */
function toolName(raw: string): string {
  const name = raw
    .replace(/[{}]/g, '')
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, 64);
  return name || 'operation';
}

function unique(name: string, taken: Set<string>): string {
  let n = name;
  for (let i = 2; taken.has(n); i++) n = `${name.slice(0, 60)}_${i}`;
  taken.add(n);
  return n;
}

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function withDescription(schema: unknown, description: unknown): Json {
  const s = isObject(schema) ? schema : {};
  return typeof description === 'string' && description && s.description === undefined ? { ...s, description } : s;
}

/** The object a local $ref points to ("#/components/..."), followed through refs to refs. */
function deref(doc: Json, v: unknown, hops = 0): unknown {
  if (!isObject(v) || typeof v.$ref !== 'string') return v;
  if (hops > MAX_DEPTH || !v.$ref.startsWith('#/')) return {};
  let at: unknown = doc;
  for (const part of v.$ref.slice(2).split('/')) at = isObject(at) ? at[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return deref(doc, at, hops + 1);
}

/** A schema with its local $refs inlined; a ref already being inlined above (recursion) or too deep becomes {} (any). */
function inline(doc: Json, schema: unknown, depth: number, stack: string[]): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(doc, s, depth + 1, stack));
  if (!isObject(schema)) return schema;
  if (typeof schema.$ref === 'string') {
    if (stack.includes(schema.$ref) || depth > MAX_DEPTH) return {};
    return inline(doc, deref(doc, schema), depth + 1, [...stack, schema.$ref]);
  }
  if (depth > MAX_DEPTH) return {};
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    // Keywords a function's parameters do not use, and that only lengthen the prompt.
    if (k === 'example' || k === 'examples' || k === 'xml' || k === 'externalDocs' || k.startsWith('x-')) continue;
    out[k] = inline(doc, v, depth + 1, stack);
  }
  return out;
}

/** An operation called with the model's arguments: the answer's status and text (read no further than the fetch's cap). */
/** Headers a document's parameter may name but a model may not set: they would change where or how the request goes. */
const FIXED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'authorization', 'cookie', 'proxy-authorization']);

export async function callOperation(
  fetch: GuardedFetch,
  baseUrl: string,
  plan: OperationPlan,
  args: Json,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  let path = plan.path;
  const query = new URLSearchParams();
  const sent: Record<string, string> = {};
  for (const p of plan.params) {
    const v = args[p.name];
    if (v === undefined || v === null) {
      if (p.required) throw new OpenApiError(`the argument '${p.name}' (${p.in}) is required`);
      continue;
    }
    const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
    if (p.in === 'path') {
      // '.' and '..' survive encoding (so does %2e%2e: URLs read it as '..'): /repos/{owner}/{repo} would reach /admin.
      if (text === '.' || text === '..') throw new OpenApiError(`the argument '${p.name}' (path) cannot be '${text}'`);
      path = path.split(`{${p.name}}`).join(encodeURIComponent(text));
    } else if (p.in === 'query')
      for (const each of Array.isArray(v) ? v : [v]) query.append(p.name, typeof each === 'object' ? JSON.stringify(each) : String(each));
    else if (!FIXED_HEADERS.has(p.name.toLowerCase())) sent[p.name.toLowerCase()] = text.replace(/[\r\n]/g, ' ');
  }
  // The source's own headers (its credentials) win over a model's header of the same name, whatever its case.
  for (const name of Object.keys(headers)) delete sent[name.toLowerCase()];
  const qs = query.toString();
  const url = `${baseUrl}${path.startsWith('/') ? '' : '/'}${path}${qs ? `?${qs}` : ''}`;
  const body = plan.bodyArg && args[plan.bodyArg] !== undefined ? JSON.stringify(args[plan.bodyArg]) : undefined;
  if (plan.bodyArg && plan.bodyRequired && body === undefined) throw new OpenApiError(`the argument '${plan.bodyArg}' is required`);
  const res = await fetch(url, {
    method: plan.method,
    // The source's own headers (its credentials) after the model's: a model cannot replace them.
    headers: {
      accept: 'application/json, text/plain;q=0.9, */*;q=0.5',
      'user-agent': 'kbchat-tools/0.1',
      ...sent,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body,
    signal,
  });
  return { status: res.status, text: await res.text() };
}
