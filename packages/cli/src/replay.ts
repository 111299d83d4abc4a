// `kbchat replay <requestId>`: asks the gateway's admin API to send a failed
// request's stored body again, and prints what came back: the status, the
// replay's own request id, and the answer (or the stream's payloads).
// Exit status: 0 when the replay succeeded, 1 otherwise.

interface ReplayAnswer {
  request_id: string;
  original_request_id: string;
  status: number;
  stream: boolean;
  response: unknown;
}

function errorMessage(body: unknown): string | undefined {
  const err = (body as { error?: { message?: unknown } } | null)?.error;
  return typeof err?.message === 'string' ? err.message : undefined;
}

function pretty(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** Human-readable report of a replay. */
export function formatReplay(r: ReplayAnswer): string {
  const ok = r.status >= 200 && r.status < 300;
  const lines = [
    `Replayed request ${r.original_request_id}`,
    `  new request id: ${r.request_id}`,
    `  status:         ${r.status} ${ok ? 'OK' : 'FAILED'}${r.stream ? ' (stream)' : ''}`,
  ];
  const message = r.stream ? undefined : errorMessage(r.response);
  if (message) lines.push(`  error:          ${message}`);
  if (r.stream && Array.isArray(r.response)) {
    lines.push(`Stream (${r.response.length} data payloads):`);
    for (const p of r.response) lines.push(`  data: ${typeof p === 'string' ? p : JSON.stringify(p)}`);
  } else {
    lines.push('Response:', pretty(r.response));
  }
  return lines.join('\n');
}

export async function replayCommand(requestId: string | undefined, opts: { gatewayUrl: string; token?: string }): Promise<number> {
  if (!requestId) {
    console.error('kbchat replay: name the request id, e.g. kbchat replay 20261122185045123abcdef012345');
    return 1;
  }
  if (!opts.token) {
    console.error('kbchat replay: an admin token is needed: --token, GATEWAY_ADMIN_TOKEN or INITIAL_ROOT_TOKEN');
    return 1;
  }
  const url = `${opts.gatewayUrl.replace(/\/+$/, '')}/api/logs/${encodeURIComponent(requestId)}/replay`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${opts.token}` } });
    text = await res.text();
  } catch (err) {
    console.error(`kbchat replay: cannot reach the gateway at ${opts.gatewayUrl}: ${(err as Error).message}`);
    return 1;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    console.error(`kbchat replay: the gateway answered ${res.status} with a body that is not JSON:\n${text}`);
    return 1;
  }
  if (!res.ok) {
    console.error(`kbchat replay: the gateway refused (${res.status}): ${errorMessage(body) ?? text}`);
    return 1;
  }
  const answer = body as ReplayAnswer;
  console.log(formatReplay(answer));
  return answer.status >= 200 && answer.status < 300 ? 0 : 1;
}
