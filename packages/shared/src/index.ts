export * from './errors.js';
export * from './ids.js';
export * from './sse.js';
export * from './tokens.js';
export * from './wire.js';
export * from './urls.js';
export * from './http-server.js';
export * from './passwords.js';
