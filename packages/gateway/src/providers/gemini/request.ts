// OpenAI chat body -> Gemini generateContent body. System and developer
// messages become systemInstruction; assistant turns are role "model";
// tool_calls become functionCall parts and `tool` messages functionResponse
// parts (named after the call they answer: Gemini matches results by name);
// turns of the same role merge. Generation settings go in generationConfig.
import { errors } from '../../errors.js';
import { imageSource, openAIText, stopList } from '../wire.js';

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

const bad = (field: string, why: string) => errors.badField(field, `Invalid '${field}': ${why}`);

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
};

function userParts(content: unknown, at: string): Part[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (content == null) return [];
  if (!Array.isArray(content)) throw bad(at, 'must be a string or an array of content parts');
  const parts = content.map((part, j): Part => {
    const where = `${at}[${j}]`;
    if (part?.type === 'text') return { text: String(part.text ?? '') };
    if (part?.type === 'image_url') {
      const src = imageSource(part.image_url?.url ?? part.image_url);
      if (!src) throw bad(`${where}.image_url.url`, 'must be a data: URL with base64 bytes or an http(s) URL');
      if (src.kind === 'data') return { inlineData: { mimeType: src.mediaType, data: src.data } };
      // fileData needs a MIME type; a URL says it only by its extension (JPEG when it does not).
      const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(src.url)?.[1]?.toLowerCase() ?? '';
      return { fileData: { mimeType: IMAGE_TYPES[ext] ?? 'image/jpeg', fileUri: src.url } };
    }
    throw bad(`${where}.type`, `content part type "${part?.type}" cannot be sent to a Gemini channel`);
  });
  return parts.filter((p) => p.text !== '');
}

function argsOf(args: unknown, at: string): Record<string, unknown> {
  if (typeof args !== 'string' || !args.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(args);
  } catch {
    throw bad(at, 'must be a JSON object (Gemini takes function arguments as an object)');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad(at, 'must be a JSON object');
  return v as Record<string, unknown>;
}

/** A tool's result as Gemini's `response` object: a JSON object as it is, anything else as {"result": text}. */
function responseOf(text: string): Record<string, unknown> {
  const t = text.trim();
  if (t.startsWith('{')) {
    try {
      const v = JSON.parse(t);
      if (v && typeof v === 'object' && !Array.isArray(v)) return v;
    } catch {
      /* not JSON: the text itself */
    }
  }
  return { result: text };
}

/** JSON Schema keywords Gemini's `parameters` (an OpenAPI subset) refuses, removed at every depth. */
const UNSUPPORTED = new Set(['$schema', '$id', 'additionalProperties', 'strict']);

function cleanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(cleanSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) if (!UNSUPPORTED.has(k)) out[k] = cleanSchema(v);
  return out;
}

function toolsOf(tools: unknown): Part[] | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) throw bad('tools', 'must be an array');
  const functionDeclarations = tools.map((t, i) => {
    if (t?.type !== 'function' || typeof t.function?.name !== 'string') throw bad(`tools[${i}]`, 'only function tools can be sent to a Gemini channel');
    const f = t.function;
    return {
      name: f.name,
      ...(typeof f.description === 'string' ? { description: f.description } : {}),
      ...(f.parameters && typeof f.parameters === 'object' && Object.keys(f.parameters.properties ?? {}).length
        ? { parameters: cleanSchema(f.parameters) }
        : {}),
    };
  });
  return functionDeclarations.length ? [{ functionDeclarations }] : undefined;
}

function toolConfigOf(choice: unknown): Part | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  const name = (choice as any)?.function?.name;
  if (typeof name === 'string') return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } };
  throw bad('tool_choice', 'must be "auto", "none", "required" or {"type":"function","function":{"name":...}}');
}

function generationConfigOf(body: Record<string, any>): Record<string, unknown> {
  const gc: Record<string, unknown> = {};
  if (typeof body.temperature === 'number') gc.temperature = body.temperature; // the same 0..2 range
  if (typeof body.top_p === 'number') gc.topP = body.top_p;
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number') gc.maxOutputTokens = max;
  const stops = stopList(body.stop);
  if (stops) gc.stopSequences = stops;
  if (typeof body.n === 'number' && body.n > 1) gc.candidateCount = body.n;
  if (typeof body.seed === 'number') gc.seed = body.seed;
  if (typeof body.presence_penalty === 'number') gc.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === 'number') gc.frequencyPenalty = body.frequency_penalty;
  const format = body.response_format;
  if (format?.type === 'json_object') gc.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    gc.responseMimeType = 'application/json';
    if (format.json_schema?.schema) gc.responseJsonSchema = format.json_schema.schema;
  }
  return gc;
}

/** The Gemini generateContent body for an OpenAI chat body (the model and `stream` go in the URL). */
export function geminiRequest(body: Record<string, any>): Record<string, unknown> {
  if (body.functions !== undefined || body.function_call !== undefined) {
    throw bad('functions', "the legacy 'functions' field cannot be sent to a Gemini channel; use 'tools'");
  }
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  const system: string[] = [];
  const contents: Content[] = [];
  const callNames = new Map<string, string>();
  const add = (role: Content['role'], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  messages.forEach((m: any, i) => {
    const at = `messages[${i}]`;
    switch (m?.role) {
      case 'system':
      case 'developer':
        system.push(openAIText(m.content));
        break;
      case 'user':
        add('user', userParts(m.content, `${at}.content`));
        break;
      case 'assistant': {
        const text = openAIText(m.content);
        const calls: Part[] = (Array.isArray(m.tool_calls) ? m.tool_calls : []).map((c: any, j: number) => {
          if (typeof c?.function?.name !== 'string') throw bad(`${at}.tool_calls[${j}].function.name`, 'is required');
          if (typeof c.id === 'string') callNames.set(c.id, c.function.name);
          return { functionCall: { name: c.function.name, args: argsOf(c.function.arguments, `${at}.tool_calls[${j}].function.arguments`) } };
        });
        add('model', [...(text ? [{ text }] : []), ...calls]);
        break;
      }
      case 'tool': {
        const name = callNames.get(m.tool_call_id) ?? m.name;
        if (typeof name !== 'string') throw bad(`${at}.tool_call_id`, 'must name a tool call of an earlier assistant message');
        add('user', [{ functionResponse: { name, response: responseOf(openAIText(m.content)) } }]);
        break;
      }
      default:
        throw bad(`${at}.role`, `role "${m?.role}" cannot be sent to a Gemini channel`);
    }
  });
  if (contents.length === 0) throw bad('messages', 'needs at least one user or assistant message for a Gemini channel');
  const out: Record<string, unknown> = { contents };
  const text = system.filter(Boolean).join('\n\n');
  if (text) out.systemInstruction = { parts: [{ text }] };
  const gc = generationConfigOf(body);
  if (Object.keys(gc).length) out.generationConfig = gc;
  const tools = toolsOf(body.tools);
  if (tools) {
    out.tools = tools;
    const config = toolConfigOf(body.tool_choice);
    if (config) out.toolConfig = config;
  }
  return out;
}
