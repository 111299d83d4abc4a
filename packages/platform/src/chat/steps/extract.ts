// Content extraction: the model reads the conversation and fills an
// application's declared fields (the pipeline's `newVariables`). Values are
// coerced to the declared type, since prompt-mode models and sim-tools answer
// numbers as strings. Never throws: failures come back in `error`.
import type { GatewayClient, GatewayError } from '../../gateway-client/index.js';
import type { LlmModel } from '../../models/config-file.js';
import { callForArguments, callModeOf, type ArgumentsSchema, type CallMode, type ChatTurn } from './call-mode.js';
import { builtInPrompt, customPrompt, historyMessages, historyText, type PromptSection } from './prompt-template.js';

export type FieldType = 'string' | 'number' | 'boolean';

export interface ExtractField {
  key: string;
  description: string;
  type: FieldType;
  required: boolean;
  /** The values allowed (compared case-insensitively; the declared spelling is kept). */
  enum?: string[];
}

export interface ExtractInput {
  question: string;
  history: ChatTurn[];
  fields: ExtractField[];
  /** What the extraction is for, shown to the model. */
  description?: string;
}

export interface ExtractResult {
  /** The values found, by key, of the declared type; fields not found are absent. */
  fields: Record<string, unknown>;
  /** Every required field has a value. */
  success: boolean;
  /** The required fields without a value. */
  missing: string[];
  mode: CallMode;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Milliseconds. */
  runningTime: number;
  /** The model's raw answer (arguments or text). */
  answer: string;
  requestId?: string;
  error?: string;
  failure?: GatewayError;
}

export const EXTRACT_FUNCTION_NAME = 'extract_fields';

const PROMPT_INTRO = 'Extract information from the conversation below into a JSON object.';
const PROMPT_ANSWER_FORMAT =
  "Answer with only a JSON object that maps field keys to values of the field's type, and nothing else. Use only what the conversation states: leave out a field it does not give rather than guessing.";

const SYSTEM_FOR_FUNCTIONS = `Extract the values of the function's parameters from the conversation and call ${EXTRACT_FUNCTION_NAME} with them. Use only what the conversation states; do not guess.`;

function fieldList(fields: ExtractField[]): string {
  return fields
    .map((f) => {
      const allowed = f.enum?.length ? `; one of: ${f.enum.join(', ')}` : '';
      return `- ${f.key} (${f.type}, ${f.required ? 'required' : 'optional'}): ${f.description.replace(/\s+/g, ' ').trim()}${allowed}`;
    })
    .join('\n');
}

/** The sections a prompt-mode extraction shows; custom prompts place them with these placeholders. */
function promptSections(input: ExtractInput): PromptSection[] {
  return [
    { name: 'description', heading: 'Task', text: input.description?.trim() ?? '' },
    { name: 'fields', aliases: ['json'], heading: 'Fields (key, type, required or optional: description)', text: fieldList(input.fields) },
    { name: 'history', heading: 'Conversation so far', text: historyText(input.history) },
    { name: 'question', aliases: ['text'], heading: 'Latest message', text: input.question.trim() },
  ];
}

/** The prompt-mode text: the model's customExtractPrompt when it has one, else the built-in prompt. */
export function extractPrompt(model: LlmModel, input: ExtractInput): string {
  const sections = promptSections(input);
  return model.customExtractPrompt?.trim() ? customPrompt(model.customExtractPrompt, sections) : builtInPrompt(PROMPT_INTRO, sections, PROMPT_ANSWER_FORMAT);
}

/** The arguments' JSON schema: one property per field, of its type, required ones required. */
export function fieldsSchema(fields: ExtractField[]): ArgumentsSchema {
  const properties: ArgumentsSchema['properties'] = {};
  for (const f of fields) properties[f.key] = { type: f.type, description: f.description, ...(f.enum?.length ? { enum: f.enum } : {}) };
  return { type: 'object', properties, required: fields.filter((f) => f.required).map((f) => f.key) };
}

function messagesFor(mode: CallMode, model: LlmModel, input: ExtractInput): { role: string; content: string }[] {
  if (mode === 'prompt') return [{ role: 'user', content: extractPrompt(model, input) }];
  const task = input.description?.trim() ? `\n\nTask:\n${input.description.trim()}` : '';
  return [{ role: 'system', content: SYSTEM_FOR_FUNCTIONS + task }, ...historyMessages(input.history), { role: 'user', content: input.question }];
}

const TRUE_WORDS = new Set(['true', 'yes', 'y', '1', 'on']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0', 'off']);
const GROUPED_NUMBER = /^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$/;

/**
 * A value as the field's type: { value } when it converts, { problem } when
 * it does not, {} when there is nothing (null or empty: not stated).
 */
export function coerceField(field: ExtractField, value: unknown): { value?: unknown; problem?: string } {
  if (value === null || value === undefined || (typeof value === 'string' && !value.trim())) return {};
  const shown = JSON.stringify(value);
  let out: unknown;
  if (field.type === 'number') {
    if (typeof value === 'number') out = value;
    else if (typeof value === 'string') {
      const s = value.trim();
      out = Number(GROUPED_NUMBER.test(s) ? s.replace(/,/g, '') : s);
    }
    if (typeof out !== 'number' || !Number.isFinite(out)) return { problem: `${field.key}: ${shown} is not a number` };
  } else if (field.type === 'boolean') {
    const word = typeof value === 'boolean' ? String(value) : typeof value === 'number' || typeof value === 'string' ? String(value).trim().toLowerCase() : '';
    if (TRUE_WORDS.has(word)) out = true;
    else if (FALSE_WORDS.has(word)) out = false;
    else return { problem: `${field.key}: ${shown} is not a boolean` };
  } else {
    out = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  if (field.enum?.length) {
    const allowed = field.enum.find((e) => e.toLowerCase() === String(out).trim().toLowerCase());
    if (allowed === undefined) return { problem: `${field.key}: ${shown} is not one of ${field.enum.join(', ')}` };
    out = field.type === 'string' ? allowed : out;
  }
  return { value: out };
}

export async function extractFields(gateway: GatewayClient, model: LlmModel, input: ExtractInput): Promise<ExtractResult> {
  const mode = callModeOf(model);
  const requiredKeys = input.fields.filter((f) => f.required).map((f) => f.key);
  const base = { mode, model: model.model, inputTokens: 0, outputTokens: 0, runningTime: 0, answer: '', fields: {} };
  if (input.fields.length === 0) return { ...base, success: true, missing: [] };
  const call = await callForArguments(gateway, {
    mode,
    model,
    functionName: EXTRACT_FUNCTION_NAME,
    functionDescription: 'Records the values found in the conversation.',
    parameters: fieldsSchema(input.fields),
    messages: messagesFor(mode, model, input),
  });
  const result: ExtractResult = {
    ...base,
    success: requiredKeys.length === 0,
    missing: requiredKeys,
    inputTokens: call.inputTokens,
    outputTokens: call.outputTokens,
    runningTime: call.runningTime,
    answer: call.answer,
    requestId: call.requestId,
  };
  if (!call.args) return { ...result, error: call.error, failure: call.failure };
  // Entries, not assignment: a field keyed "__proto__" stays an ordinary value.
  const found: [string, unknown][] = [];
  const problems: string[] = [];
  for (const field of input.fields) {
    const given = Object.hasOwn(call.args, field.key) ? call.args[field.key] : undefined;
    const { value, problem } = coerceField(field, given);
    if (problem) problems.push(`${problem} (dropped)`);
    else if (value !== undefined) found.push([field.key, value]);
  }
  const values = Object.fromEntries(found);
  const missing = requiredKeys.filter((k) => !Object.hasOwn(values, k));
  const id = call.requestId ? ` (request id: ${call.requestId})` : '';
  return {
    ...result,
    fields: values,
    success: missing.length === 0,
    missing,
    ...(problems.length ? { error: `${problems.join('; ')}${id}` } : {}),
  };
}
