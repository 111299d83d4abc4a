// The upstream directly: each enabled channel that lists the model is tested
// by the gateway's own channel test (POST /api/channels/:id/test), which sends
// one request with the channel's key from inside the gateway: no relay, no
// retry, no charge, and the key never leaves the gateway.
import { fail, ok, warn, type ChannelInfo, type Check, type Found } from './check.js';
import { errorText, request } from './http.js';
import { upstreamRemedy } from './remedies.js';

interface TestResult {
  ok: boolean;
  status?: number;
  error?: string;
  latency_ms: number;
}

/** The gateway bounds a channel test at 15 s; the doctor waits a little longer for its answer. */
const CHANNEL_TEST_MS = 15_000;

const channelLabel = (c: ChannelInfo) => `channel ${c.name} (${c.base_url ?? c.type})`;

export async function upstreamCheck(f: Found, model: string): Promise<Check> {
  const listing = f.channels!.filter((c) => c.models.includes(model));
  if (!listing.length)
    return fail('upstream', 'no channel of the gateway lists it', 'add a channel that serves it (gateway console, Channels; or <PROVIDER>_MODELS)', model);
  const enabled = listing.filter((c) => c.status === 'enabled');
  if (!enabled.length)
    return fail('upstream', `its channels are disabled: ${listing.map((c) => c.name).join(', ')}`, 'enable one (gateway console, Channels)', model);
  const lines: string[] = [];
  const failures: Array<{ channel: ChannelInfo; result: TestResult }> = [];
  for (const channel of enabled) {
    const a = await request(`${f.opts.gatewayUrl}/api/channels/${channel.id}/test`, {
      token: f.opts.adminToken,
      body: { model },
      timeoutMs: CHANNEL_TEST_MS + f.opts.timeoutMs,
    });
    const result = a.json?.data?.[0] as TestResult | undefined;
    if (a.status !== 200 || !result) {
      lines.push(`${channelLabel(channel)}: the test could not run (${a.status}: ${errorText(a)})`);
      failures.push({ channel, result: { ok: false, status: undefined, error: errorText(a), latency_ms: a.ms } });
      continue;
    }
    const autoDisabled = channel.disabled_models.find((d) => d.model === model);
    const note = autoDisabled ? ` [auto-disabled: ${autoDisabled.reason}]` : '';
    lines.push(
      `${channelLabel(channel)}: ${result.ok ? `${result.status} in ${result.latency_ms} ms` : `${result.status ?? 'no answer'}: ${result.error}`}${note}`,
    );
    if (!result.ok) failures.push({ channel, result });
  }
  const detail = lines.join('; ');
  if (!failures.length) return ok('upstream', detail, model);
  const first = failures[0]!;
  const remedy = upstreamRemedy(first.result.status, first.result.error, first.channel.base_url ?? 'the upstream');
  return failures.length === enabled.length ? fail('upstream', detail, remedy, model) : warn('upstream', detail, `${first.channel.name}: ${remedy}`, model);
}
