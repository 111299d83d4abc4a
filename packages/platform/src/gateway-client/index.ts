export {
  GatewayClient,
  decodeBase64Floats,
  type GatewayClientOptions,
  type EmbeddingsResult,
  type ChatStreamResult,
  type ModelToolCall,
  type RerankResult,
  type GatewayLogRow,
} from './client.js';
export { GatewayError, isGatewayError, parseRetryAfter, errorFromResponse, LOGGED_BODY_CHARS } from './errors.js';
export { recordCall, type ModelCall, type ModelCallKind } from './calls.js';
