// `kbchat replay <requestId>`: asks the gateway's admin API to send a failed
// request's stored body again, and prints what came back.
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
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${opts.token}` } });
  } catch (err) {
    console.error(`kbchat replay: cannot reach the gateway at ${opts.gatewayUrl}: ${(err as Error).message}`);
    return 1;
  }
  const text = await res.text();
  console.log(text);
  return res.ok ? 0 : 1;
}
