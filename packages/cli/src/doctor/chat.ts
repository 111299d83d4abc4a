// A chat model through the gateway, with the platform's token and the body the
// platform sends (config.json's defaultConfig under its own fields): a
// streamed answer, then, where config.json has the model call tools, a tool
// call and the answer from its result. A stream that ends empty or breaks off
// is asked again with stream=false, which shows the exact error.
import type { LlmModel } from '@kbchat/platform';
import { fail, ok, type Check, type Found } from './check.js';
import { errorText, isBroken, isEmpty, request, streamChat, withId, type StreamOutcome } from './http.js';
import { short } from './platform-steps.js';
import { gatewayRemedy, STREAM_BREAKS, toolsRemedy } from './remedies.js';

const WEATHER = {
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string', description: 'the city' } }, required: ['city'] },
};
const QUESTION = 'What is the weather in Paris right now? Use the get_weather tool.';
/** A value no model would say without reading it: the answer from the result must carry it. */
const RESULT_MARK = '23.4';
const TOOL_RESULT = JSON.stringify({ city: 'Paris', temperature_c: Number(RESULT_MARK), sky: 'clear' });

function bodyFor(m: LlmModel, fields: Record<string, unknown>): Record<string, unknown> {
  return { ...(m.defaultConfig ?? {}), model: m.model, ...fields };
}

/**
 * The stream ended empty, broke off, or failed on the upstream's side (5xx): the
 * same request without stream, and what each said.
 */
async function repeated(f: Found, name: string, model: string, body: Record<string, unknown>, s: StreamOutcome, remedyWhenAnswered: string): Promise<Check> {
  const what = s.refused
    ? `the streamed request failed: ${s.status}`
    : isEmpty(s)
      ? 'the stream ended empty'
      : `the stream broke off after "${short(s.content || s.calls.map((c) => c.name).join(','))}"`;
  const why = s.refused ? errorText(s.refused) : (s.streamError?.message ?? s.readError ?? 'it ended without [DONE]');
  const streamPart = withId(`${what}${s.refused ? ' ' : ': '}${why}`, s.requestId);
  const a = await request(`${f.opts.gatewayUrl}/v1/chat/completions`, {
    token: f.opts.platformToken,
    body: { ...body, stream: false },
    timeoutMs: f.opts.timeoutMs,
  });
  if (a.status !== 200) {
    const remedy =
      a.status === 400 || a.status === 422
        ? `the upstream refuses this request: the body is the model's defaultConfig in config.json plus the platform's own fields; correct defaultConfig (or the channel) as the message says`
        : gatewayRemedy(a, model);
    return fail(name, `${streamPart}; without stream: ${withId(`${a.status} ${errorText(a)}`, a.requestId)}`, remedy, model);
  }
  const message = a.json?.choices?.[0]?.message ?? {};
  const answered = message.content || message.tool_calls?.[0]?.function?.name || message.function_call?.name || '';
  return fail(name, `${streamPart}; without stream it answers: ${withId(`"${short(String(answered))}"`, a.requestId)}`, remedyWhenAnswered, model);
}

export async function gatewayChat(f: Found, m: LlmModel): Promise<Check> {
  const name = 'gateway request';
  const body = bodyFor(m, { messages: [{ role: 'user', content: 'Say hi in one word.' }], max_tokens: 16 });
  const s = await streamChat(`${f.opts.gatewayUrl}/v1/chat/completions`, f.opts.platformToken, body, f.opts.timeoutMs);
  if (s.refused && s.status < 500) return fail(name, withId(`${s.status}: ${errorText(s.refused)}`, s.requestId), gatewayRemedy(s.refused, m.model), m.model);
  if (s.refused || isEmpty(s) || isBroken(s)) return repeated(f, name, m.model, body, s, STREAM_BREAKS);
  return ok(name, withId(`streamed "${short(s.content)}" in ${s.ms} ms`, s.requestId), m.model);
}

/** The tool-calling checks, in the mode config.json gives the model; none when it uses neither tools nor functions. */
export async function toolChecks(f: Found, m: LlmModel): Promise<Check[]> {
  const legacy = !m.toolChoice && Boolean(m.functionCall);
  if (!m.toolChoice && !legacy) return [];
  const url = `${f.opts.gatewayUrl}/v1/chat/completions`;
  const user = { role: 'user', content: QUESTION };
  const offer = legacy ? { functions: [WEATHER], function_call: 'auto' } : { tools: [{ type: 'function', function: WEATHER }], tool_choice: 'auto' };
  const form = legacy ? 'a function_call' : 'tool_calls';
  const first = bodyFor(m, { messages: [user], ...offer, max_tokens: 200 });
  const s = await streamChat(url, f.opts.platformToken, first, f.opts.timeoutMs);
  if (s.refused && s.status < 500)
    return [
      fail(
        'tool call',
        withId(`${s.status}: ${errorText(s.refused)}`, s.requestId),
        `${gatewayRemedy(s.refused, m.model)}; if the upstream refuses tools: ${toolsRemedy(m.model)}`,
        m.model,
      ),
    ];
  if (s.refused || isEmpty(s) || isBroken(s)) return [await repeated(f, 'tool call', m.model, first, s, STREAM_BREAKS)];
  const call = s.calls[0];
  if (!call?.name)
    return [fail('tool call', withId(`answered with text and no ${form} in the stream: "${short(s.content)}"`, s.requestId), toolsRemedy(m.model), m.model)];
  const calls = [ok('tool call', withId(`${form}: ${call.name}(${short(call.arguments, 80)})`, s.requestId), m.model)];

  const callId = call.id ?? 'call_kbchat_doctor';
  const history = legacy
    ? [
        user,
        { role: 'assistant', content: null, function_call: { name: call.name, arguments: call.arguments } },
        { role: 'function', name: call.name, content: TOOL_RESULT },
      ]
    : [
        user,
        { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
        { role: 'tool', tool_call_id: callId, content: TOOL_RESULT },
      ];
  const second = bodyFor(m, { messages: history, ...offer, max_tokens: 200 });
  const r = await streamChat(url, f.opts.platformToken, second, f.opts.timeoutMs);
  if (r.refused && r.status < 500)
    return [
      ...calls,
      fail(
        'tool result',
        withId(`${r.status}: ${errorText(r.refused)}`, r.requestId),
        `${gatewayRemedy(r.refused, m.model)}; if it refuses tool results: ${toolsRemedy(m.model)}`,
        m.model,
      ),
    ];
  if (r.refused || isEmpty(r) || isBroken(r)) return [...calls, await repeated(f, 'tool result', m.model, second, r, STREAM_BREAKS)];
  if (!r.content.includes(RESULT_MARK)) {
    const got = r.content ? `"${short(r.content)}"` : `another call (${r.calls.map((c) => c.name).join(', ')})`;
    return [
      ...calls,
      fail('tool result', withId(`the answer to the tool's result (${RESULT_MARK} °C) does not use it: ${got}`, r.requestId), toolsRemedy(m.model), m.model),
    ];
  }
  return [...calls, ok('tool result', withId(`answered from the result: "${short(r.content)}"`, r.requestId), m.model)];
}
