// An application's default quote texts: the platform writes its prompts with
// them, and the web app shows them when the fields are empty (one copy).

/** One quote per search result; the default is the format local-extractive reads best (any model can use it). */
export const DEFAULT_QUOTE_TEMPLATE = '<quote id="{{index}}" source="{{source}}">\n{{q}}\n{{a}}\n</quote>';

/** The user message when quotes were found: {{quote}} and {{question}}. */
export const DEFAULT_QUOTE_PROMPT = `Answer the question using only the quotes in the Reference block below. Cite every quote you use by its id in square brackets, like [1]. If the quotes do not contain the answer, say that you could not find it in the provided knowledge.
<Reference>
{{quote}}
</Reference>
Question: {{question}}`;

export type DefaultQuoteTemplate = typeof DEFAULT_QUOTE_TEMPLATE;
export type DefaultQuotePrompt = typeof DEFAULT_QUOTE_PROMPT;
