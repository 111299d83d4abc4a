export * from './errors.js';
export * from './ids.js';
export * from './sse.js';
export * from './tokens.js';
export * from './wire.js';
export * from './field-messages.js';
export * from './urls.js';
