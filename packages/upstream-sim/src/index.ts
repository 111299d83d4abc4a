// OpenAI-compatible upstream model simulator (node:http only), used by tests and
// benchmarks as a real HTTP upstream behind the gateway. Deterministic: the same
// request gives the same reply.
//
// Endpoints: POST /v1/chat/completions, POST /v1/embeddings, POST /v1/rerank (and /rerank),
//            GET /v1/models, GET /sim/stats, POST /sim/reset.
//
// Models (the name picks the behaviour; any suffix after ':' is ignored):
//   sim-chat               "Echo: <last user message>", streamed word by word
//   sim-echo-prompt        every message's content joined by "\n"
//   sim-tools              calls the first tool until a tool result is present, then "Tool result: ..."
//                          (each required parameter = the last word of the last user message);
//                          with the legacy `functions` instead of `tools`, a `function_call` the same
//                          way (finish_reason "function_call"), until a role "function" message is present
//   sim-strict             rejects temperature 0, two-decimal temperatures, max_tokens > 4096:
//                          400 when stream=false, an EMPTY 200 stream when stream=true
//   sim-503                always 503
//   sim-slow               waits slowMs (SIM_SLOW_MS, default 3000) before answering
//   sim-drop               streams a few words, then destroys the connection
//   sim-nousage            like sim-chat, never sends usage (not even with include_usage)
//   sim-no-stream-options  like sim-chat, 400 when the body has stream_options
//   sim-big-<N>            like sim-chat, the answer is N bytes of 'abcdefghij'... in ONE
//                          streamed content chunk (default N 1,000,000)
//   sim-flaky-<K>          503 for the first K requests to that exact name since the
//                          last reset, then like sim-chat (default K 1)
//   sim-500 / sim-400      always 500 server_error / 400 invalid_request_error
//   sim-hang               never answers (until the client gives up or close())
//   sim-embed-<D>          L2-normalised embeddings of D dims (default 384); base64 supported
//   sim-embed-raw-<D>      embeddings that are NOT normalised (norm 3)
//   sim-rerank             rerank by word overlap
// Any other model name gets 404 model_not_found. With a key, requests without
// "Authorization: Bearer <key>" get 401 "Incorrect API key provided: ...".
export { startUpstreamSim } from './server.js';
export type { SimStats, UpstreamSim, UpstreamSimOptions } from './types.js';
