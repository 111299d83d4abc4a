// Question classification: the model picks which of an application's
// categories the user's question belongs to, so the pipeline can route it to
// that category's knowledge bases and prompt. Never throws: a failed call or an
// unreadable answer gives categoryId null and says why in `error`.
import type { GatewayClient, GatewayError } from '../../gateway-client/index.js';
import type { LlmModel } from '../../models/config-file.js';
import { callForArguments, callModeOf, type CallMode, type ChatTurn } from './call-mode.js';
import { builtInPrompt, customPrompt, historyMessages, historyText, type PromptSection } from './prompt-template.js';

export interface Category {
  id: string;
  description: string;
}

export interface ClassifyInput {
  question: string;
  history: ChatTurn[];
  categories: Category[];
  /** What the application is about, to help tell categories apart. */
  background?: string;
}

export interface ClassifyResult {
  /** The chosen category's id; null when none could be chosen (see `error`). */
  categoryId: string | null;
  mode: CallMode;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Milliseconds. */
  runningTime: number;
  /** The model's raw answer (arguments or text), for the response data. */
  answer: string;
  requestId?: string;
  error?: string;
  failure?: GatewayError;
}

export const CLASSIFY_FUNCTION_NAME = 'classify_question';

const PROMPT_INTRO = "Classify the user's question into exactly one of the categories below.";
const PROMPT_ANSWER_FORMAT = `Pick the category whose description fits the question best, using the conversation to resolve what the question refers to. Answer with only a JSON object of the form {"type": "<category id>"} and nothing else.`;

const SYSTEM_FOR_FUNCTIONS = `Classify the user's last question into exactly one of the categories below, using the conversation to resolve what it refers to, and call ${CLASSIFY_FUNCTION_NAME} with the id of the category that fits best.`;

const categoryList = (categories: Category[]) => categories.map((c) => `- ${c.id}: ${c.description.replace(/\s+/g, ' ').trim()}`).join('\n');

/** The sections a prompt-mode classification shows; custom prompts place them with these placeholders. */
function promptSections(input: ClassifyInput): PromptSection[] {
  return [
    { name: 'background', aliases: ['systemPrompt'], heading: 'Background', text: input.background?.trim() ?? '' },
    { name: 'typeList', heading: 'Categories (id: description)', text: categoryList(input.categories) },
    { name: 'history', heading: 'Conversation so far', text: historyText(input.history) },
    { name: 'question', heading: 'Question', text: input.question.trim() },
  ];
}

/** The prompt-mode text: the model's customCQPrompt when it has one, else the built-in prompt. */
export function classifyPrompt(model: LlmModel, input: ClassifyInput): string {
  const sections = promptSections(input);
  return model.customCQPrompt?.trim() ? customPrompt(model.customCQPrompt, sections) : builtInPrompt(PROMPT_INTRO, sections, PROMPT_ANSWER_FORMAT);
}

function messagesFor(mode: CallMode, model: LlmModel, input: ClassifyInput): { role: string; content: string }[] {
  if (mode === 'prompt') return [{ role: 'user', content: classifyPrompt(model, input) }];
  const background = input.background?.trim() ? `\n\nBackground:\n${input.background.trim()}` : '';
  const system = `${SYSTEM_FOR_FUNCTIONS}\n\nCategories (id: description):\n${categoryList(input.categories)}${background}`;
  // The question goes last, as the user's message the model answers.
  return [{ role: 'system', content: system }, ...historyMessages(input.history), { role: 'user', content: input.question }];
}

const ANSWER_KEYS = ['type', 'category', 'categoryId', 'typeId', 'id'];

/**
 * The category an answer names: its id exactly, case-insensitively, or with
 * quotes and a copied ": description" around it, or its description.
 */
export function matchCategory(answer: unknown, categories: Category[]): Category | undefined {
  if (typeof answer !== 'string' && typeof answer !== 'number') return undefined;
  const raw = String(answer).trim();
  const exact = categories.find((c) => c.id === raw);
  if (exact) return exact;
  const said = raw.replace(/^[\s"'`*\-[(]+|[\s"'`*.)\]]+$/g, '').toLowerCase();
  if (!said) return undefined;
  return (
    categories.find((c) => c.id.toLowerCase() === said) ??
    categories.find((c) => said.startsWith(`${c.id.toLowerCase()}:`)) ??
    categories.find((c) => c.description.trim().toLowerCase() === said)
  );
}

export async function classifyQuestion(gateway: GatewayClient, model: LlmModel, input: ClassifyInput): Promise<ClassifyResult> {
  const mode = callModeOf(model);
  const base = { mode, model: model.model, inputTokens: 0, outputTokens: 0, runningTime: 0, answer: '' };
  if (input.categories.length === 0) return { ...base, categoryId: null, error: 'the classification has no categories' };
  const ids = input.categories.map((c) => c.id);
  const call = await callForArguments(gateway, {
    mode,
    model,
    functionName: CLASSIFY_FUNCTION_NAME,
    functionDescription: "Records the category of the user's question.",
    parameters: {
      type: 'object',
      properties: { type: { type: 'string', enum: ids, description: 'The id of the category that fits the question best.' } },
      required: ['type'],
    },
    messages: messagesFor(mode, model, input),
  });
  const result: ClassifyResult = {
    ...base,
    categoryId: null,
    inputTokens: call.inputTokens,
    outputTokens: call.outputTokens,
    runningTime: call.runningTime,
    answer: call.answer,
    requestId: call.requestId,
  };
  if (call.failure) return { ...result, error: call.error, failure: call.failure };
  const id = call.requestId ? ` (request id: ${call.requestId})` : '';
  if (!call.args) {
    // A model that answers with just the id, no JSON, still counts.
    const bare = matchCategory(call.answer, input.categories);
    return bare ? { ...result, categoryId: bare.id } : { ...result, error: call.error };
  }
  const key = ANSWER_KEYS.find((k) => call.args![k] !== undefined);
  if (!key) return { ...result, error: `the model's answer names no category (no "type" field): ${JSON.stringify(call.args)}${id}` };
  const category = matchCategory(call.args[key], input.categories);
  if (!category) {
    return { ...result, error: `the model answered ${JSON.stringify(call.args[key])}, which matches no category (${ids.join(', ')})${id}` };
  }
  return { ...result, categoryId: category.id };
}
