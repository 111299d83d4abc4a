// The gateway's own API (/api/*: the console's calls).
export * from './common.js';
export * from './errors.js';
export * from './auth.js';
export * from './users.js';
export * from './tokens.js';
export * from './channels.js';
export * from './prices.js';
export * from './logs.js';
export * from './dashboard.js';
export * from './redemptions.js';
export * from './fallbacks.js';
export * from './groups.js';
export * from './rate-limits.js';
