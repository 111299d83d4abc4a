// The chat pipeline's structured steps: question classification and content
// extraction, each calling the model in the mode config.json allows.
export {
  callModeOf,
  callForArguments,
  structuredRequestBody,
  type CallMode,
  type ChatTurn,
  type ArgumentsSchema,
  type StructuredCall,
  type StructuredCallResult,
} from './call-mode.js';
export { classifyQuestion, classifyPrompt, matchCategory, CLASSIFY_FUNCTION_NAME, type Category, type ClassifyInput, type ClassifyResult } from './classify.js';
export {
  extractFields,
  extractPrompt,
  fieldsSchema,
  coerceField,
  EXTRACT_FUNCTION_NAME,
  type ExtractField,
  type ExtractInput,
  type ExtractResult,
  type FieldType,
} from './extract.js';
export { parseFirstJsonObject } from './lenient-json.js';
export { builtInPrompt, customPrompt, historyText, type PromptSection } from './prompt-template.js';
