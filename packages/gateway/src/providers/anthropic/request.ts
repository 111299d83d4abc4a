// OpenAI chat body -> Anthropic Messages body. System and developer messages
// become `system`; `tool` messages become tool_result blocks in one user turn
// (Anthropic wants every result of a turn's calls in the next message);
// assistant tool_calls become tool_use blocks; turns of the same role merge.
import { errors } from '../../errors.js';
import { imageSource, openAIText, stopList } from '../wire.js';

/**
 * max_tokens is required by Anthropic and optional in OpenAI's API. 4096 when
 * the client names none: every Claude model accepts it (the oldest ones'
 * output limit), and it bounds what a reservation must cover.
 */
export const DEFAULT_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

const bad = (field: string, why: string) => errors.badField(field, `Invalid '${field}': ${why}`);

/** A text part's `cache_control` (the form OpenAI-compatible routers accept) is kept: it is how Anthropic's prompt cache is asked for. */
const withCache = (block: Block, part: any): Block => (part?.cache_control ? { ...block, cache_control: part.cache_control } : block);

/** System text as one string, or as blocks when some part asks for the prompt cache. */
function systemOf(contents: unknown[]): string | Block[] | undefined {
  const blocks: Block[] = [];
  for (const c of contents) {
    if (typeof c === 'string') {
      if (c) blocks.push({ type: 'text', text: c });
    } else if (Array.isArray(c)) {
      for (const p of c) if (p?.type === 'text' && p.text) blocks.push(withCache({ type: 'text', text: String(p.text) }, p));
    }
  }
  if (blocks.length === 0) return undefined;
  return blocks.some((b) => b.cache_control) ? blocks : blocks.map((b) => b.text).join('\n\n');
}

function userBlocks(content: unknown, at: string): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (content == null) return [];
  if (!Array.isArray(content)) throw bad(at, 'must be a string or an array of content parts');
  const blocks = content.map((part, j) => {
    const where = `${at}[${j}]`;
    if (part?.type === 'text') return withCache({ type: 'text', text: String(part.text ?? '') }, part);
    if (part?.type === 'image_url') {
      const src = imageSource(part.image_url?.url ?? part.image_url);
      if (!src) throw bad(`${where}.image_url.url`, 'must be a data: URL with base64 bytes or an http(s) URL');
      return src.kind === 'data'
        ? { type: 'image', source: { type: 'base64', media_type: src.mediaType, data: src.data } }
        : { type: 'image', source: { type: 'url', url: src.url } };
    }
    throw bad(`${where}.type`, `content part type "${part?.type}" cannot be sent to an Anthropic channel`);
  });
  // Anthropic refuses empty text blocks; OpenAI clients do send them.
  return blocks.filter((b) => b.type !== 'text' || b.text);
}

function toolUses(toolCalls: unknown, at: string): Block[] {
  if (toolCalls === undefined) return [];
  if (!Array.isArray(toolCalls)) throw bad(at, 'must be an array');
  return toolCalls.map((call, j) => {
    const args = call?.function?.arguments;
    let input: unknown = {};
    if (typeof args === 'string' && args.trim()) {
      try {
        input = JSON.parse(args);
      } catch {
        throw bad(`${at}[${j}].function.arguments`, 'must be a JSON object (Anthropic takes tool input as an object)');
      }
    }
    if (!input || typeof input !== 'object' || Array.isArray(input)) throw bad(`${at}[${j}].function.arguments`, 'must be a JSON object');
    if (typeof call?.id !== 'string' || typeof call?.function?.name !== 'string') throw bad(`${at}[${j}]`, 'needs an id and a function name');
    return { type: 'tool_use', id: call.id, name: call.function.name, input };
  });
}

function toolsOf(tools: unknown): Block[] | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) throw bad('tools', 'must be an array');
  return tools.map((t, i) => {
    if (t?.type !== 'function' || typeof t.function?.name !== 'string') throw bad(`tools[${i}]`, 'only function tools can be sent to an Anthropic channel');
    const f = t.function;
    return {
      name: f.name,
      ...(typeof f.description === 'string' ? { description: f.description } : {}),
      input_schema: f.parameters && typeof f.parameters === 'object' ? f.parameters : { type: 'object', properties: {} },
    };
  });
}

function toolChoiceOf(choice: unknown, parallel: unknown): Block | undefined {
  let out: Block | undefined;
  if (choice === undefined || choice === 'auto') out = choice === 'auto' ? { type: 'auto' } : undefined;
  else if (choice === 'none') out = { type: 'none' };
  else if (choice === 'required') out = { type: 'any' };
  else if (typeof choice === 'object' && choice && typeof (choice as any).function?.name === 'string')
    out = { type: 'tool', name: (choice as any).function.name };
  else throw bad('tool_choice', 'must be "auto", "none", "required" or {"type":"function","function":{"name":...}}');
  if (parallel === false && out?.type !== 'none') out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/** The Anthropic Messages body for an OpenAI chat body (`stream` kept; stream_options, n, and the like dropped). */
export function anthropicRequest(body: Record<string, any>, upstreamModel: string): Record<string, unknown> {
  if (body.functions !== undefined || body.function_call !== undefined) {
    throw bad('functions', "the legacy 'functions' field cannot be sent to an Anthropic channel; use 'tools'");
  }
  if (typeof body.n === 'number' && body.n > 1) throw bad('n', 'Anthropic channels answer one choice (n = 1)');
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  const system: unknown[] = [];
  const turns: Turn[] = [];
  const add = (role: Turn['role'], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  messages.forEach((m: any, i) => {
    const at = `messages[${i}]`;
    switch (m?.role) {
      case 'system':
      case 'developer':
        system.push(m.content);
        break;
      case 'user':
        add('user', userBlocks(m.content, `${at}.content`));
        break;
      case 'assistant': {
        const text = openAIText(m.content);
        add('assistant', [...(text ? [{ type: 'text', text }] : []), ...toolUses(m.tool_calls, `${at}.tool_calls`)]);
        break;
      }
      case 'tool':
        if (typeof m.tool_call_id !== 'string') throw bad(`${at}.tool_call_id`, 'is required for tool messages');
        add('user', [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: openAIText(m.content) }]);
        break;
      default:
        throw bad(`${at}.role`, `role "${m?.role}" cannot be sent to an Anthropic channel`);
    }
  });
  // tool_result blocks must open their user turn: results first, then whatever the user added.
  for (const t of turns) {
    if (t.role === 'user') t.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
  }
  if (turns.length === 0) throw bad('messages', 'needs at least one user or assistant message for an Anthropic channel');

  const out: Record<string, unknown> = {
    model: upstreamModel,
    messages: turns,
    max_tokens: body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS,
  };
  const sys = systemOf(system);
  if (sys) out.system = sys;
  // OpenAI's range is 0..2, Anthropic's 0..1: higher values are clamped to 1.
  if (typeof body.temperature === 'number') out.temperature = Math.min(Math.max(body.temperature, 0), 1);
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  const stops = stopList(body.stop);
  if (stops) out.stop_sequences = stops;
  if (body.stream === true) out.stream = true;
  const tools = toolsOf(body.tools);
  if (tools?.length) out.tools = tools;
  const choice = toolChoiceOf(body.tool_choice, body.parallel_tool_calls);
  if (choice && tools?.length) out.tool_choice = choice;
  if (typeof body.user === 'string') out.metadata = { user_id: body.user };
  return out;
}
