// Upstream model simulator (OpenAI, Anthropic and Gemini wire formats) (node:http only), used by tests and
// benchmarks as a real HTTP upstream behind the gateway. Deterministic: the same
// request gives the same reply.
//
// OpenAI endpoints: POST /v1/chat/completions, POST /v1/embeddings, POST /v1/rerank (and /rerank),
//            GET /v1/models, GET /sim/stats, POST /sim/reset.
//
// Models (the name picks the behaviour; any suffix after ':' is ignored):
//   sim-chat               "Echo: <last user message>", streamed word by word
//   sim-echo-prompt        every message's content joined by "\n"
//   sim-tools              calls the first tool until a tool result is present, then "Tool result: ..."
//                          (each required parameter = the last word of the last user message);
//                          with the legacy `functions` instead of `tools`, a `function_call` the same
//                          way (finish_reason "function_call"), until a role "function" message is present;
//                          with neither, but a system message listing tools in <tools>[...]</tools>: the
//                          JSON {"tool", "arguments"} for the first, until a <tool_result> user message
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
// "Authorization: Bearer <key>" get 401 "Incorrect API key provided: ...";
// `keys` adds keys it takes too (a key pool's), and `exhaustedKeys` are keys
// whose quota is used up (429 insufficient_quota; in Anthropic's format 400
// "Your credit balance is too low", in Gemini's 429 RESOURCE_EXHAUSTED).
//
// Anthropic's Messages API (anthropic.ts): POST /v1/messages, key in x-api-key (401
// authentication_error "invalid x-api-key"), anthropic-version required; max_tokens
// required, unknown fields, role "system", temperature > 1 and unpaired tool_use /
// tool_result refused (400 invalid_request_error, Anthropic's wording); stop_sequences
// and max_tokens cut the answer (stop_reason stop_sequence / max_tokens); blocks with
// cache_control give cache_creation_input_tokens once, cache_read_input_tokens after.
//   (the key may also come as "Authorization: Bearer", as current Anthropic SDKs send it)
//   claude-sim               echo, like sim-chat; streamed as message_start, content_block_start,
//                            ping, content_block_delta (text_delta), content_block_stop,
//                            message_delta (stop_reason, usage.output_tokens), message_stop
//   claude-sim-tools         with tools: a text block, then a tool_use block calling the first
//                            tool (tool_choice any/tool: the call alone, the named tool), input
//                            streamed as input_json_delta; with a tool_result: "Tool result: ..."
//   claude-sim-529 / -429 / -500   overloaded_error / rate_limit_error (retry-after) / api_error
//   claude-sim-drop          streams three words, then destroys the connection
//   claude-sim-stream-error  streams three words, then an `error` event (overloaded_error)
//   claude-sim-hang          never answers
// Google's Gemini API (gemini.ts, gemini-embed.ts): POST /v1beta/models/{model}:generateContent,
// :streamGenerateContent (?alt=sse: frames end in CRLF CRLF; else one JSON array),
// :embedContent, :batchEmbedContents (at most 100); key in x-goog-api-key or ?key= (missing:
// 403 PERMISSION_DENIED; wrong: 400 INVALID_ARGUMENT, reason API_KEY_INVALID); errors as
// {error:{code,message,status}}; unknown fields and roles other than user/model refused.
//   gemini-sim               echo, streamed four words a frame, usageMetadata on each frame
//                            (candidatesTokenCount on the last); maxOutputTokens -> MAX_TOKENS
//   gemini-sim-tools         functionCall of the first declaration (ANY + allowedFunctionNames:
//                            that one) until a functionResponse is present; finishReason STOP
//   gemini-sim-safety        prompt blocked: promptFeedback.blockReason SAFETY, no candidates
//   gemini-sim-safety-late   finishReason SAFETY (stream: after two frames of text)
//   gemini-sim-429 / -503 / -400 / -500   RESOURCE_EXHAUSTED / UNAVAILABLE / INVALID_ARGUMENT / INTERNAL
//   gemini-sim-drop / -hang  connection lost after two frames / never answers
//   gemini-sim-embed-<D>     D-dim vectors (default 768), L2-normalised at full size; with
//                            outputDimensionality N < D the first N values, NOT normalised
export { startUpstreamSim } from './server.js';
export type { SimStats, UpstreamSim, UpstreamSimOptions } from './types.js';
