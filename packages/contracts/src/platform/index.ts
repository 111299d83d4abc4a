// The platform's API: /api/* of FastGPT's shapes, the web app's own calls.
export * from './common.js';
export * from './datasets.js';
export * from './uploads.js';
