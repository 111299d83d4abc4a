// The OpenAI-style requests the gateway relays (/v1/chat/completions, /v1/embeddings, /v1/rerank).
export * from './requests.js';
