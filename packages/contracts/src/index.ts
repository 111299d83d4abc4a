// The two services' API contracts: zod schemas of what each route takes and
// answers, and their types. Browser-safe: zod only, no node: modules.
export * from './platform/index.js';
export * from './gateway/index.js';
export * from './openai/index.js';
export * from './anthropic/index.js';
