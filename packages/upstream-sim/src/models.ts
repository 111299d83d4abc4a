// Chat model names and the answers they give. The model name picks the
// behaviour; any suffix after ':' is ignored (baseModel).
import { contentText, fnv1a, tokenCount, words } from './text.js';
import type { ChatBody, ChatFunction, ChatMessage } from './types.js';

export type ChatKind =
  'chat' | 'echo-prompt' | 'tools' | 'strict' | '503' | 'slow' | 'drop' | 'nousage' | 'no-stream-options' | 'big' | 'flaky' | '500' | '400' | 'hang';

/** A chat model: its behaviour and its numeric suffix (sim-big-<N> bytes, sim-flaky-<K> failures). */
export interface ChatModel {
  kind: ChatKind;
  n: number;
}

const FIXED = new Map<string, ChatModel>(
  (['chat', 'echo-prompt', 'tools', 'strict', '503', 'slow', 'drop', 'nousage', 'no-stream-options', '500', '400', 'hang'] as const).map((kind) => [
    `sim-${kind}`,
    { kind, n: 0 },
  ]),
);
const PARAMETRISED = /^sim-(big|flaky)(?:-(\d+))?$/;
const DEFAULT_N = { big: 1_000_000, flaky: 1 } as const;

/** Names listed by GET /v1/models (parametrised ones with their default suffix). */
export const LISTED_MODELS = [
  'sim-chat',
  'sim-echo-prompt',
  'sim-tools',
  'sim-strict',
  'sim-503',
  'sim-slow',
  'sim-drop',
  'sim-embed-384',
  'sim-embed-raw-384',
  'sim-rerank',
  'sim-nousage',
  'sim-no-stream-options',
  'sim-big-1000000',
  'sim-flaky-1',
  'sim-500',
  'sim-400',
  'sim-hang',
];

export function baseModel(model: unknown): string {
  const s = String(model || '');
  const i = s.indexOf(':');
  return i < 0 ? s : s.slice(0, i);
}

// Parsed sim-big-/sim-flaky- names, so the regex runs once per distinct name.
const parsed = new Map<string, ChatModel | null>();

export function chatModel(base: string): ChatModel | null {
  const fixed = FIXED.get(base);
  if (fixed) return fixed;
  let m = parsed.get(base);
  if (m === undefined) {
    const r = PARAMETRISED.exec(base);
    const kind = r?.[1] as 'big' | 'flaky' | undefined;
    m = kind ? { kind, n: r![2] ? Number(r![2]) : DEFAULT_N[kind] } : null;
    if (parsed.size > 1000) parsed.clear(); // bound memory against arbitrary names
    parsed.set(base, m);
  }
  return m;
}

export interface ToolCall {
  id: string;
  name: string | undefined;
  arguments: string;
  /** 'function_call' when the request used the legacy `functions` field. */
  style: 'tool_calls' | 'function_call';
}

/** A text answer already cut into streamed pieces ("word ") with its completion tokens, or a tool call. */
export interface Answer {
  content: string;
  parts: string[];
  completionTokens: number;
  toolCall?: ToolCall;
}

/** Streamed pieces of a text: split after each space, as a provider streams words. */
const splitWords = (text: string): string[] => text.split(/(?<= )/);

export function textAnswer(content: string): Answer {
  return { content, parts: splitWords(content), completionTokens: tokenCount(content) };
}

function lastOfRole(msgs: ChatMessage[], role: string): ChatMessage | undefined {
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].role === role) return msgs[i];
  return undefined;
}

// sim-big answers are cached per size: building and counting megabytes per request would dominate.
const bigAnswers = new Map<number, Answer>();

function bigAnswer(n: number): Answer {
  let a = bigAnswers.get(n);
  if (!a) {
    const content = 'abcdefghij'.repeat(Math.ceil(n / 10)).slice(0, n);
    a = { content, parts: [content], completionTokens: tokenCount(content) };
    if (bigAnswers.size >= 8) bigAnswers.clear();
    bigAnswers.set(n, a);
  }
  return a;
}

/** "Echo: <words of the last user message>" cycled to `tokens` words. */
export function echoAnswer(msgs: ChatMessage[], tokens: number): Answer {
  const echo = words(contentText(lastOfRole(msgs, 'user')?.content));
  const out = ['Echo:'];
  for (let i = 0; out.length < tokens; i++) out.push(echo.length ? echo[i % echo.length] : 'ok');
  // Pieces and counts built directly: every element of `out` is exactly one word,
  // so this equals splitting and counting the joined text (as the reference does).
  const parts = new Array<string>(out.length);
  const last = out.length - 1;
  for (let i = 0; i < last; i++) parts[i] = `${out[i]} `;
  parts[last] = out[last];
  return { content: out.join(' '), parts, completionTokens: Math.ceil(out.length * 1.3) };
}

/** Calls `fn`, filling each required parameter with the last word of the user message. */
export function callFirst(fn: ChatFunction, msgs: ChatMessage[], style: ToolCall['style']): Answer {
  const ws = words(contentText(lastOfRole(msgs, 'user')?.content));
  const params: Record<string, string> = {};
  for (const p of fn.parameters?.required || []) params[p] = ws[ws.length - 1] || 'x';
  const args = JSON.stringify(params);
  const id = `call_${fnv1a(JSON.stringify(msgs)).toString(16)}`;
  return { content: '', parts: [], completionTokens: tokenCount(args) + 5, toolCall: { id, name: fn.name, arguments: args, style } };
}

export function chatAnswer(body: ChatBody, model: ChatModel, tokens: number): Answer {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  if (model.kind === 'big') return bigAnswer(model.n);
  if (model.kind === 'echo-prompt') return textAnswer(msgs.map((m) => contentText(m.content)).join('\n'));
  if (model.kind === 'tools' && Array.isArray(body.tools) && body.tools.length && body.tool_choice !== 'none') {
    // Call the first tool until a tool result is present.
    const toolMsg = lastOfRole(msgs, 'tool');
    return toolMsg ? textAnswer(`Tool result: ${contentText(toolMsg.content)}`) : callFirst(body.tools[0].function || {}, msgs, 'tool_calls');
  }
  if (model.kind === 'tools' && !body.tools && Array.isArray(body.functions) && body.functions.length && body.function_call !== 'none') {
    // The legacy form: a function's result comes back in a 'function' message.
    const resultMsg = lastOfRole(msgs, 'function');
    return resultMsg ? textAnswer(`Tool result: ${contentText(resultMsg.content)}`) : callFirst(body.functions[0] || {}, msgs, 'function_call');
  }
  if (model.kind === 'tools') {
    const offered = promptTools(msgs);
    if (offered) {
      // A model with neither tools nor functions, offered tools in its prompt: it answers with the JSON the prompt asks for.
      const result = [...msgs].reverse().find((m) => m.role === 'user' && contentText(m.content).includes('<tool_result'));
      if (result)
        return textAnswer(
          `Tool result: ${contentText(result.content)
            .replace(/<\/?tool_result[^>]*>/g, '')
            .trim()}`,
        );
      const call = callFirst(offered, msgs, 'tool_calls').toolCall!;
      return textAnswer(JSON.stringify({ tool: call.name, arguments: JSON.parse(call.arguments) }));
    }
  }
  return echoAnswer(msgs, tokens);
}

/** The first tool a system message lists in a `<tools>[...]</tools>` block (a prompt that offers tools), if any. */
function promptTools(msgs: ChatMessage[]): ChatFunction | undefined {
  for (const m of msgs) {
    if (m.role !== 'system') continue;
    const found = /<tools>\s*([\s\S]*?)\s*<\/tools>/.exec(contentText(m.content));
    if (!found) continue;
    try {
      const list = JSON.parse(found[1]!) as ChatFunction[];
      if (Array.isArray(list) && list[0]?.name) return list[0];
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** sim-strict's parameter checks, like providers that reject some values. */
export function strictProblem(body: ChatBody): string | null {
  const t = body.temperature;
  if (t === 0) return 'Invalid parameter: temperature must be greater than 0';
  if (typeof t === 'number' && Math.round(t * 10) !== t * 10) return 'Invalid parameter: temperature allows one decimal place';
  if (typeof body.max_tokens === 'number' && body.max_tokens > 4096) return 'Invalid parameter: max_tokens must be at most 4096';
  return null;
}
