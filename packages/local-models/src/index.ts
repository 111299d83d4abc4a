// @kbchat/local-models: models that run inside the kbchat process, served over
// an in-process OpenAI-compatible HTTP server the gateway uses as a channel.
export { startLocalModels, type LocalModels, type LocalModelsOptions } from './server.js';
export { LOCAL_EMBED_MODEL, LOCAL_EXTRACTIVE_MODEL, LOCAL_GGUF_MODEL, EMBED_DIMENSIONS, EMBED_MAX_MODEL_TOKENS, type LocalModelInfo } from './models.js';
export { formatQuotesForPrompt, parsePrompt, type QuoteInput, type ParsedQuote, type ParsedPrompt } from './extractive/quotes.js';
export { NOT_FOUND_ANSWER, type ExtractiveOptions } from './extractive/extractive-answer.js';
export { isNodeLlamaCppInstalled } from './gguf/gguf-engine.js';
