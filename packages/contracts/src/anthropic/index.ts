// Anthropic's Messages API, which the gateway also takes (POST /v1/messages).
export * from './messages.js';
