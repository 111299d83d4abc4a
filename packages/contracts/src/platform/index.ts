// The platform's API: /api/* of FastGPT's shapes, the web app's own calls.
export * from './common.js';
export * from './envelope.js';
export * from './datasets.js';
export * from './uploads.js';
export * from './apps.js';
export * from './accounts.js';
export * from './keys.js';
export * from './share.js';
export * from './search.js';
export * from './retrieval-checks.js';
export * from './chat.js';
export * from './chat-logs.js';
export * from './annotations.js';
export * from './prompt-defaults.js';
export * from './models.js';
export * from './tools.js';
export * from './mcp.js';
export type { Expectation as CheckExpectation } from './retrieval-checks.js';
