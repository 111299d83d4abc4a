// The settings form's state: the saved application's name, intro and settings
// as the platform gives them, edited in place; what an update must send; and
// what the form can say before asking the platform.
import { DEFAULT_QUOTE_PROMPT, DEFAULT_QUOTE_TEMPLATE } from '@kbchat/contracts';
import type { AppSettings, ModelStatus, PublicApp } from '../api';
import type { MessageKey } from '../i18n';

/** Annotation reply is set on the annotations page, beside the annotations it answers with. */
export type Draft = { name: string; intro: string } & Omit<AppSettings, 'annotationReply'>;
export type Search = AppSettings['search'];
export type Classify = NonNullable<AppSettings['classify']>;
export type Extract = NonNullable<AppSettings['extract']>;
export type ToolRef = AppSettings['tools'][number];

/** The most tools an application offers its model (the platform's limit). */
export const MAX_TOOLS = 20;

// The platform's defaults, shown when the fields are empty: the texts the
// platform writes its prompts with (one copy, in the contracts).
export { DEFAULT_QUOTE_PROMPT, DEFAULT_QUOTE_TEMPLATE };

export const QUOTE_TEMPLATE_PLACEHOLDERS = ['q', 'a', 'source', 'sourceId', 'index'];
export const QUOTE_PROMPT_PLACEHOLDERS = ['quote', 'question'];

export function fromApp(app: PublicApp): Draft {
  return {
    name: app.name,
    intro: app.intro,
    model: app.model,
    systemPrompt: app.systemPrompt,
    temperature: app.temperature,
    maxToken: app.maxToken,
    datasets: app.datasets,
    search: app.search,
    // A saved text equal to the default is the default (an update cannot unset it, so "reset" saves the default's text).
    quoteTemplate: app.quoteTemplate === DEFAULT_QUOTE_TEMPLATE ? undefined : app.quoteTemplate,
    quotePrompt: app.quotePrompt === DEFAULT_QUOTE_PROMPT ? undefined : app.quotePrompt,
    classify: app.classify,
    extract: app.extract,
    tools: app.tools,
    toolRounds: app.toolRounds,
  };
}

/** JSON with sorted keys: an edit and its undo compare equal whatever order the keys came in. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
}
const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);

/** The fields that differ from the saved app (an update replaces each; `search` merges). */
export function changedFields(saved: Draft, draft: Draft): Partial<Draft> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(draft) as (keyof Draft)[]) {
    if (!same(saved[key], draft[key])) out[key] = draft[key];
  }
  // An emptied quote text means the default; the platform keeps a saved text
  // when the field is left out, so the default is sent in its place.
  if ('quoteTemplate' in out && draft.quoteTemplate === undefined) out.quoteTemplate = DEFAULT_QUOTE_TEMPLATE;
  if ('quotePrompt' in out && draft.quotePrompt === undefined) out.quotePrompt = DEFAULT_QUOTE_PROMPT;
  // Allowed values are typed one per line: blank lines are not values.
  if (out.extract && draft.extract) {
    out.extract = {
      ...draft.extract,
      fields: draft.extract.fields.map((f) => {
        const values = f.enum?.filter((v) => v.trim() !== '');
        return { ...f, enum: values?.length ? values : undefined };
      }),
    };
  }
  return out as Partial<Draft>;
}

export function isDirty(saved: Draft, draft: Draft): boolean {
  return Object.keys(changedFields(saved, draft)).length > 0;
}

export interface Problem {
  key: MessageKey;
  vars?: Record<string, string | number>;
}

/**
 * What the form knows before asking: an update cannot remove an optional
 * value once saved (a left-out field keeps its saved value), and a model's
 * maxTemperature. Everything else is the platform's to judge (its 400 names
 * the field).
 */
export function localProblems(saved: Draft, draft: Draft, llm: ModelStatus | undefined): Problem[] {
  const problems: Problem[] = [];
  const cleared = (field: string, before: unknown, after: unknown) => {
    if (before !== undefined && after === undefined) problems.push({ key: 'apps.problem.cannotClear', vars: { field } });
  };
  cleared('temperature', saved.temperature, draft.temperature);
  cleared('maxToken', saved.maxToken, draft.maxToken);
  cleared('search.embeddingWeight', saved.search.embeddingWeight, draft.search.embeddingWeight);
  cleared('search.rerankModel', saved.search.rerankModel, draft.search.rerankModel);
  cleared('search.queryExtension.model', saved.search.queryExtension.model, draft.search.queryExtension.model);
  const max = llm?.maxTemperature;
  if (max !== undefined && draft.temperature !== undefined && draft.temperature > max) {
    problems.push({ key: 'apps.problem.temperature', vars: { max, model: llm!.model } });
  }
  return problems;
}

/** The `{{name}}`s of a prompt, as the platform fills them (prompt.ts's fillTemplate). */
export function promptVariables(text: string): string[] {
  const names = [...text.matchAll(/\{\{\s*([\w$.-]+)\s*\}\}/g)].map((m) => m[1]!);
  return [...new Set(names)];
}

/** A new category, its id one the others do not have (the platform refuses the same id twice). */
export function newCategory(others: Classify['categories']): Classify['categories'][number] {
  const taken = new Set(others.map((c) => c.id.toLowerCase()));
  let n = others.length + 1;
  while (taken.has(`category${n}`)) n++;
  return { id: `category${n}`, description: '' };
}

export function newField(): Extract['fields'][number] {
  return { key: '', description: '', type: 'string', required: false };
}
