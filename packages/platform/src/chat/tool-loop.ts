// The answering step of an application with tools: the model gets the tools,
// the platform runs each call it makes (tools/runner.ts), sends the results
// back and asks again, for at most `maxRounds` rounds; then it answers with
// what it has. Three ways to offer tools, by what the model's config.json
// entry allows (as classification does, steps/call-mode.ts): OpenAI `tools`
// with tool_choice auto, the legacy `functions`, or a prompt that lists the
// tools and asks for a JSON object to call one. A tool that fails or times
// out goes back to the model as an error result; it never ends the turn.
import { countTextTokens } from '@kbchat/shared';
import type { GatewayClient, ModelCall, ModelToolCall } from '../gateway-client/index.js';
import { secondsSince, type StepRecord } from './records.js';
import type { LlmModel } from '../models/config-file.js';
import type { ToolRunner, ToolSpec } from '../tools/runner.js';
import { callModeOf, type CallMode } from './steps/call-mode.js';
import { parseFirstJsonObject } from './steps/lenient-json.js';

/** A message of the tool conversation (OpenAI's shapes: assistant tool_calls, tool and function results). */
type Message = Record<string, unknown>;

/** One tool call as the records and the stream show it. */
export interface ToolCallRecord {
  id: string;
  toolName: string;
  sourceName: string;
  /** The arguments as the model wrote them. */
  params: string;
  /** The result sent back to the model (cut for the record). */
  response: string;
  ok: boolean;
  error?: string;
  runningTime: number;
  round: number;
}

export interface ToolLoopSink {
  answer(text: string): void;
  toolCall(call: { id: string; toolName: string; params: string }): void;
  toolResponse(call: { id: string; toolName: string; response: string; ok: boolean }): void;
}

export interface ToolLoopInput {
  gateway: GatewayClient;
  runner: ToolRunner;
  teamId: string;
  model: LlmModel;
  tools: ToolSpec[];
  /** The answering call's body (model, messages, temperature, max_tokens...) without tools. */
  body: Record<string, unknown>;
  maxRounds: number;
  stream: boolean;
  signal?: AbortSignal;
  sink: ToolLoopSink;
}

export interface ToolLoopResult {
  content: string;
  mode: CallMode;
  rounds: number;
  calls: ToolCallRecord[];
  inputTokens: number;
  outputTokens: number;
  /** The loop's model calls, in order: the gateway's request id and the seconds each took. */
  modelCalls: { requestId?: string; runningTime: number }[];
}

/** Calls run in one round at most; more are answered as refused, so that one answer cannot run for hours. */
export const MAX_CALLS_PER_ROUND = 8;

/** What a record keeps of a result: the model got up to the runner's own cut. */
const RECORD_CHARS = 2000;

/** OpenAI function names: letters, digits, _ and -, at most 64. Two tools of one name get _2, _3. */
function functionNames(tools: ToolSpec[]): Map<string, ToolSpec> {
  const byName = new Map<string, ToolSpec>();
  for (const tool of tools) {
    const base = tool.name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 60) || 'tool';
    let name = base;
    for (let n = 2; byName.has(name); n++) name = `${base}_${n}`;
    byName.set(name, tool);
  }
  return byName;
}

/** What a description may take of a prompt: a source's text reaches the system message. */
const DESCRIPTION_CHARS = 1000;

function functionsOf(byName: Map<string, ToolSpec>) {
  return [...byName].map(([name, t]) => ({ name, description: t.description.slice(0, DESCRIPTION_CHARS), parameters: t.inputSchema }));
}

/** The prompt that offers tools to a model with neither tools nor functions: a <tools> list and the JSON to answer with. */
function toolsPrompt(byName: Map<string, ToolSpec>): string {
  const list = functionsOf(byName);
  return [
    'You can use tools. To use one, answer with only this JSON object and nothing else:',
    '{"tool": "<tool name>", "arguments": {<the arguments>}}',
    'You will get its result in a <tool_result> message. When you have what you need, answer the user normally, without JSON.',
    `<tools>\n${JSON.stringify(list)}\n</tools>`,
  ].join('\n');
}

export async function runToolLoop(input: ToolLoopInput): Promise<ToolLoopResult> {
  const mode = callModeOf(input.model);
  const byName = functionNames(input.tools);
  const messages: Message[] = [...(input.body.messages as Message[])];
  if (mode === 'prompt' && byName.size) {
    const at = messages[0]?.role === 'system' ? 0 : -1;
    if (at === 0) messages[0] = { ...messages[0], content: `${String(messages[0]!.content)}\n\n${toolsPrompt(byName)}` };
    else messages.unshift({ role: 'system', content: toolsPrompt(byName) });
  }
  const result: ToolLoopResult = { content: '', mode, rounds: 0, calls: [], inputTokens: 0, outputTokens: 0, modelCalls: [] };
  for (let round = 1; ; round++) {
    // After the last round the model answers with what it has: it may call no more.
    const offer = round <= input.maxRounds;
    if (!offer && mode === 'prompt' && round > 1)
      messages.push({ role: 'user', content: 'The tools are no longer available: answer now with what you have, without JSON.' });
    const started = performance.now();
    const answer = await ask(input, mode, byName, messages, offer);
    result.rounds = round;
    result.inputTokens += answer.inputTokens;
    result.outputTokens += answer.outputTokens;
    result.modelCalls.push({ ...(answer.requestId ? { requestId: answer.requestId } : {}), runningTime: secondsSince(started) });
    const called = offer && answer.calls.length > 0;
    // The answer is every round's text (what the model said before its calls was streamed too), never a prompt-mode call's JSON.
    if (answer.content && !(called && mode === 'prompt')) result.content += answer.content;
    if (!called) return result;
    messages.push(...(await runCalls(input, mode, byName, answer, round, result.calls)));
  }
}

interface RoundAnswer {
  content: string;
  calls: ModelToolCall[];
  inputTokens: number;
  outputTokens: number;
  requestId?: string;
}

/** One model call of the loop, streamed or not; in prompt mode a JSON tool call is held back from the stream. */
async function ask(input: ToolLoopInput, mode: CallMode, byName: Map<string, ToolSpec>, messages: Message[], offer: boolean): Promise<RoundAnswer> {
  const body: Record<string, unknown> = { ...input.body, messages };
  const fns = functionsOf(byName);
  // The last round keeps the tools but may call none: the calls already in the messages
  // need their tools beside them (Anthropic refuses a tool_use block without its tool).
  if (mode === 'toolChoice' && fns.length)
    Object.assign(body, { tools: fns.map((f) => ({ type: 'function', function: f })), tool_choice: offer ? 'auto' : 'none' });
  if (mode === 'functionCall' && fns.length) Object.assign(body, { functions: fns, function_call: offer ? 'auto' : 'none' });
  let content: string;
  let calls: ModelToolCall[];
  let usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
  let requestId: string | undefined;
  if (input.stream) {
    const held = new HeldJson(input.sink, mode === 'prompt' && offer);
    const r = await input.gateway.chatStream(body, (text) => held.push(text), input.signal);
    ({ content, usage, requestId } = r);
    calls = r.toolCalls ?? [];
    if (mode === 'prompt' && offer) calls = promptCall(content);
    if (calls.length === 0) held.release();
  } else {
    const r = await input.gateway.chat(body, input.signal);
    const message = r.json?.choices?.[0]?.message ?? {};
    content = String(message.content ?? '');
    usage = r.json?.usage;
    requestId = r.requestId;
    calls = mode === 'prompt' ? (offer ? promptCall(content) : []) : answerCalls(message);
  }
  // Counted here when the model reports no usage, as the answer without tools is.
  const inputTokens = usage?.prompt_tokens ?? messages.reduce((n, m) => n + countTextTokens(typeof m.content === 'string' ? m.content : '') + 4, 0);
  const outputTokens = usage?.completion_tokens ?? countTextTokens(content) + calls.reduce((n, c) => n + countTextTokens(c.arguments), 0);
  return { content, calls, inputTokens, outputTokens, requestId };
}

/** The calls of a whole (non-stream) answer: tool_calls, or the legacy function_call. */
function answerCalls(message: { tool_calls?: unknown; function_call?: { name?: string; arguments?: string } }): ModelToolCall[] {
  if (message.function_call?.name) return [{ id: 'function_call', name: message.function_call.name, arguments: message.function_call.arguments ?? '{}' }];
  if (!Array.isArray(message.tool_calls)) return [];
  return (message.tool_calls as { id?: string; function?: { name?: string; arguments?: string } }[])
    .filter((c) => c.function?.name)
    .map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.function!.name!, arguments: c.function!.arguments ?? '{}' }));
}

/** A prompt-mode answer that is a JSON object naming a tool is a call of it. */
function promptCall(content: string): ModelToolCall[] {
  const trimmed = content.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('```')) return [];
  const json = parseFirstJsonObject(trimmed);
  // A call of a tool not offered is still a call: it is answered with an error, not shown as the answer.
  if (!json || typeof json.tool !== 'string' || !json.tool) return [];
  return [{ id: `prompt_call_${json.tool}`, name: json.tool, arguments: JSON.stringify(json.arguments ?? {}) }];
}

/** Runs a round's calls one after another, and gives the messages that carry them and their results back. */
async function runCalls(
  input: ToolLoopInput,
  mode: CallMode,
  byName: Map<string, ToolSpec>,
  answer: RoundAnswer,
  round: number,
  records: ToolCallRecord[],
): Promise<Message[]> {
  const out: Message[] = [];
  // The arguments go back as JSON objects: a provider that must read them (Anthropic's tool_use) refuses broken JSON.
  const echoed = (c: ModelToolCall) => JSON.stringify(parseArguments(c.arguments) ?? {});
  // The legacy form carries one call an answer; others run at most MAX_CALLS_PER_ROUND.
  const calls = mode === 'functionCall' ? answer.calls.slice(0, 1) : answer.calls;
  if (mode === 'toolChoice') {
    const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: echoed(c) } }));
    out.push({ role: 'assistant', content: answer.content || null, tool_calls: toolCalls });
  } else if (mode === 'functionCall') {
    const c = calls[0]!;
    out.push({ role: 'assistant', content: null, function_call: { name: c.name, arguments: echoed(c) } });
  } else {
    out.push({ role: 'assistant', content: answer.content });
  }
  for (const [i, call] of calls.entries()) {
    if (i >= MAX_CALLS_PER_ROUND) {
      const text = `Error: not run: at most ${MAX_CALLS_PER_ROUND} tool calls an answer`;
      out.push(mode === 'toolChoice' ? { role: 'tool', tool_call_id: call.id, content: text } : { role: 'user', content: toolResultMessage(call.name, text) });
      continue;
    }
    const tool = byName.get(call.name);
    input.sink.toolCall({ id: call.id, toolName: call.name, params: call.arguments });
    const started = performance.now();
    let text: string;
    let ok = false;
    let error: string | undefined;
    const args = parseArguments(call.arguments);
    if (!tool) error = `there is no tool named ${call.name}`;
    else if (args === undefined) error = `the arguments are not a JSON object: ${call.arguments.slice(0, 200)}`;
    if (error) text = `Error: ${error}`;
    else {
      const r = await input.runner.call(input.teamId, tool!, args, input.signal);
      ok = r.ok;
      error = r.error;
      text = r.ok ? r.text : `Error: ${r.error ?? 'the tool failed'}${r.text ? `\n${r.text}` : ''}`;
    }
    input.sink.toolResponse({ id: call.id, toolName: call.name, response: text, ok });
    records.push({
      id: call.id,
      toolName: tool?.name ?? call.name,
      sourceName: tool?.sourceName ?? '',
      params: call.arguments,
      response: text.length > RECORD_CHARS ? `${text.slice(0, RECORD_CHARS)}… (${text.length} characters)` : text,
      ok,
      ...(error ? { error } : {}),
      runningTime: secondsSince(started),
      round,
    });
    if (mode === 'toolChoice') out.push({ role: 'tool', tool_call_id: call.id, content: text });
    else if (mode === 'functionCall') out.push({ role: 'function', name: call.name, content: text });
    else out.push({ role: 'user', content: toolResultMessage(call.name, text) });
  }
  return out;
}

/** A result in prompt mode: a user message, its own closing tag escaped so that a result cannot end it and speak as the user. */
function toolResultMessage(name: string, text: string): string {
  const safe = text.replace(/<\/?tool_result/gi, (tag) => tag.replace('<', '&lt;'));
  return `<tool_result name="${name.replace(/[^\w-]/g, '_')}">\n${safe}\n</tool_result>`;
}

function parseArguments(text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return {};
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return parseFirstJsonObject(text);
  }
}

/**
 * The stream's text, passed on as it comes, except in prompt mode where an
 * answer that begins like a JSON object may be a tool call: it is held until
 * the answer ends, and released only if it was not one.
 */
class HeldJson {
  private held = '';
  private holding: boolean | undefined;

  constructor(
    private readonly sink: ToolLoopSink,
    private readonly mayBeCall: boolean,
  ) {}

  push(text: string): void {
    if (!this.mayBeCall) return this.sink.answer(text);
    if (this.holding === undefined) {
      this.held += text;
      const start = this.held.trimStart();
      if (!start) return;
      this.holding = start.startsWith('{') || start.startsWith('`');
      if (!this.holding) this.flush();
      return;
    }
    if (this.holding) this.held += text;
    else this.sink.answer(text);
  }

  /** The answer was not a call: what was held goes out. */
  release(): void {
    this.flush();
  }

  private flush(): void {
    if (this.held) this.sink.answer(this.held);
    this.held = '';
  }
}

/**
 * The loop's responseData: one record per tool call (its source, arguments,
 * result, time and error), then the answering step's, with every model call
 * of the loop. A tool the app names that no longer exists is said there.
 */
export function toolRecords(
  loop: ToolLoopResult,
  missing: string[],
  step: { model: string; query: string; quoteCount: number; runningTime: number },
): StepRecord[] {
  const calls: StepRecord[] = loop.calls.map((c) => ({
    moduleName: `Tool: ${c.toolName}`,
    moduleType: 'toolCall',
    runningTime: c.runningTime,
    toolName: c.toolName,
    sourceName: c.sourceName,
    toolInput: c.params,
    toolRes: c.response,
    round: c.round,
    ...(c.error ? { error: c.error } : {}),
  }));
  const modelCalls: ModelCall[] = loop.modelCalls.map((c, i) => ({ step: `chatNode round ${i + 1}`, kind: 'chat', model: step.model, ...c }));
  const last = loop.modelCalls[loop.modelCalls.length - 1]?.requestId;
  return [
    ...calls,
    {
      moduleName: 'AI chat',
      moduleType: 'chatNode',
      runningTime: step.runningTime,
      model: step.model,
      inputTokens: loop.inputTokens,
      outputTokens: loop.outputTokens,
      query: step.query,
      quoteCount: step.quoteCount,
      toolMode: loop.mode,
      toolRounds: loop.rounds,
      ...(missing.length ? { error: `tools no longer available: ${missing.join(', ')}` } : {}),
      ...(last ? { requestId: last } : {}),
      modelCalls,
    },
  ];
}
