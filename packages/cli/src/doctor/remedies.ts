// What to do about a failure, in the words of the place it is fixed.
import { errorCode, type Answer } from './http.js';

export const STREAM_BREAKS =
  "the model answers without stream, but its stream breaks off: look at what lies between the gateway and the upstream (a proxy that buffers or cuts streams, an idle timeout), or the provider's status";

export const toolsRemedy = (model: string) =>
  `set "toolChoice": false and "functionCall": false for ${model} in config.json: the platform then asks for JSON in the prompt instead (classification and extraction keep working)`;

/** An upstream's answer to the direct probe (or relayed by the gateway), by its status. */
export function upstreamRemedy(status: number | undefined, error: string | undefined, where: string): string {
  if (status === 401 || status === 403)
    return "the channel's key is rejected: update it in the gateway console, Channels (or its <PROVIDER>_API_KEY, then restart)";
  if (status === 404) return "the upstream does not know this model: correct the name in the channel's models or model_mapping (console, Channels)";
  if (status === 429) return "the upstream limits this key (rate or quota): wait, raise the provider's limits, or add another channel for the model";
  if (status !== undefined && status >= 500)
    return `the upstream is failing (${status}): try again later, look at the provider's status, or add another channel for the model`;
  if (status !== undefined && status >= 400) return `the upstream refuses the request (${status}): check the channel's type and base URL (console, Channels)`;
  if (error && /timed out|within \d+ ms|timeout/i.test(error))
    return `${where} does not answer in time: check the base URL, and the network from the gateway's machine to it`;
  return `the gateway cannot reach ${where}: check the channel's base URL, DNS, proxy and firewall from the gateway's machine`;
}

/** A gateway's refusal of a relayed request, by its error code. */
export function gatewayRemedy(a: Answer, model: string): string {
  const code = errorCode(a);
  switch (code) {
    case 'model_not_found':
      return `no enabled channel serves ${model} for the token's group: add one, or enable the one that does (gateway console, Channels)`;
    case 'insufficient_user_quota':
    case 'token_quota_exhausted':
      return "the platform token's money is spent: top up its user (gateway console, Users) or raise the token's quota";
    case 'model_not_allowed':
      return `the platform's token may not use ${model}: add it to the token's models (gateway console, Tokens)`;
    case 'invalid_api_key':
    case 'token_disabled':
    case 'token_expired':
      return "the gateway refuses the platform's token: set GATEWAY_TOKEN to a valid one";
    case 'upstream_timeout':
    case 'do_request_failed':
      return upstreamRemedy(undefined, a.json?.error?.message, 'the upstream');
    default: {
      const upstream = Number(a.json?.error?.param);
      if (code === 'bad_response_status_code' && upstream) return upstreamRemedy(upstream, undefined, 'the upstream');
      return a.status >= 500
        ? upstreamRemedy(a.status, undefined, 'the upstream')
        : "the request is refused as the message says: see the gateway's log for the request id (console, Logs)";
    }
  }
}
