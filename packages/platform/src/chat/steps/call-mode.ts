// How a step gets structured arguments out of a model, in the one mode its
// config.json entry allows: `tools` + a forced `tool_choice`, the legacy
// `functions` + `function_call`, or a plain prompt whose answer is read as
// JSON. Classification and extraction both go through callForArguments, so
// the mode logic lives here once. No HTTP here: the GatewayClient does that.
import type { GatewayClient } from '../../gateway-client/index.js';
import { GatewayError } from '../../gateway-client/index.js';
import type { LlmModel } from '../../models/config-file.js';
import { parseFirstJsonObject } from './lenient-json.js';

export type CallMode = 'toolChoice' | 'functionCall' | 'prompt';

/** A turn of the conversation as the steps receive it. */
export interface ChatTurn {
  role: string;
  content: string;
}

/** The JSON schema of a function's arguments: an object with named properties. */
export interface ArgumentsSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
}

export interface StructuredCall {
  mode: CallMode;
  model: LlmModel;
  /** The function the model is made to call (tools and functions modes). */
  functionName: string;
  functionDescription: string;
  parameters: ArgumentsSchema;
  /** Sent as they are; in prompt mode they must ask for a JSON object themselves. */
  messages: { role: string; content: string }[];
}

export interface StructuredCallResult {
  /** The arguments the model gave, or undefined when it gave none that parse (see `error`). */
  args: Record<string, unknown> | undefined;
  /** The model's raw answer: the arguments string in tools/functions mode, else the content. */
  answer: string;
  inputTokens: number;
  outputTokens: number;
  /** Milliseconds the call took, failures included. */
  runningTime: number;
  /** The exact body sent (stream is added off by the client). */
  requestBody: Record<string, unknown>;
  requestId: string | undefined;
  /** What went wrong: the gateway's message (with its request id) or why the answer could not be read. */
  error?: string;
  /** The gateway's error, so a caller can log the request body it carries. */
  failure?: GatewayError;
}

/** Tools when the model supports tool_choice, else functions, else a prompt (config.json's flags). */
export function callModeOf(model: LlmModel): CallMode {
  if (model.toolChoice) return 'toolChoice';
  if (model.functionCall) return 'functionCall';
  return 'prompt';
}

/**
 * Low temperature: these steps want the most likely answer. The model's
 * defaultConfig is spread over it (as FastGPT does, e.g. a model that only
 * accepts temperature 1), but never over the model, messages or the mode's fields.
 */
export function structuredRequestBody(call: StructuredCall): Record<string, unknown> {
  const fn = { name: call.functionName, description: call.functionDescription, parameters: call.parameters };
  const body: Record<string, unknown> = { temperature: 0.1, ...call.model.defaultConfig, model: call.model.model, messages: call.messages };
  if (call.mode === 'toolChoice') {
    body.tools = [{ type: 'function', function: fn }];
    body.tool_choice = { type: 'function', function: { name: fn.name } };
  } else if (call.mode === 'functionCall') {
    body.functions = [fn];
    body.function_call = { name: fn.name };
  }
  return body;
}

/** Calls the model and reads its arguments; never throws (failures come back in `error`). */
export async function callForArguments(gateway: GatewayClient, call: StructuredCall): Promise<StructuredCallResult> {
  const requestBody = structuredRequestBody(call);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let json: any;
  let requestId: string | undefined;
  try {
    ({ json, requestId } = await gateway.chat(requestBody));
  } catch (err) {
    const failure = err instanceof GatewayError ? err : undefined;
    return {
      args: undefined,
      answer: '',
      inputTokens: 0,
      outputTokens: 0,
      runningTime: elapsed(),
      requestBody,
      requestId: failure?.requestId,
      error: failure ? failure.message : `the model call failed: ${(err as Error)?.message ?? String(err)}`,
      failure,
    };
  }
  const message = json?.choices?.[0]?.message ?? {};
  const { answer, args } = readArguments(message);
  const result: StructuredCallResult = {
    args,
    answer,
    requestBody,
    requestId,
    runningTime: elapsed(),
    inputTokens: Number(json?.usage?.prompt_tokens ?? 0),
    outputTokens: Number(json?.usage?.completion_tokens ?? 0),
  };
  if (!args) {
    const shown = answer.length > 300 ? `${answer.slice(0, 300)}…` : answer;
    const id = requestId ? ` (request id: ${requestId})` : '';
    result.error = answer.trim() ? `the model's answer has no readable JSON object: ${shown}${id}` : `the model gave an empty answer${id}`;
  }
  return result;
}

/**
 * The arguments from whichever channel the model used: a model in tools mode
 * that answers in text anyway is still read, leniently, from its content.
 */
function readArguments(message: any): { answer: string; args: Record<string, unknown> | undefined } {
  const called = message?.tool_calls?.[0]?.function?.arguments ?? message?.function_call?.arguments;
  if (typeof called === 'string' && called.trim()) return { answer: called, args: parseArguments(called) };
  if (called && typeof called === 'object' && !Array.isArray(called)) return { answer: JSON.stringify(called), args: called };
  const content = typeof message?.content === 'string' ? message.content : '';
  return { answer: content, args: parseFirstJsonObject(content) };
}

function parseArguments(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // some providers send JavaScript-ish arguments: read them leniently below
  }
  return parseFirstJsonObject(text);
}
