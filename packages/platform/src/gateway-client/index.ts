export { GatewayClient, decodeBase64Floats, type GatewayClientOptions, type EmbeddingsResult, type ChatStreamResult, type RerankResult } from './client.js';
export { GatewayError, isGatewayError, parseRetryAfter, errorFromResponse, LOGGED_BODY_CHARS } from './errors.js';
