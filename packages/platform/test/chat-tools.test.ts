// An application that acts: its answering model gets tools from the team's
// tool sources (a real MCP server in the test, the SDK's McpServer over
// Streamable HTTP, test/tool-servers.ts), and the platform runs each call the model makes and sends
// the result back, on the simulator's tool-calling model (sim-tools calls the
// first tool with the question's last word, lower-cased, then answers
// "Tool result: ...").
// In stream and non-stream mode, with OpenAI tools, the legacy functions and
// the prompt (a model with neither), from an MCP server and from an HTTP API
// described by OpenAPI; the calls appear as toolCall /
// toolResponse events (detail mode) and in responseData; a tool that fails or
// hangs is reported to the model and the answer says so, within the timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../gateway/test/helpers.js';
import { startPlatformFixture, type PlatformFixture } from './platform-fixture.js';
import { API_TOKEN, MCP_TOKEN, startApiServer, startMcpServer } from './tool-servers.js';

const KEY = 'kbchat-test-chat-tools-key-0123456789';
const TOOL_TIMEOUT_MS = 1500;

describe('applications with tools', () => {
  let f: PlatformFixture;
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;
  let sourceId: string;
  const call = (path: string, json?: unknown, key?: string) => f.call(path, { json, key });

  /** An app on `model` with the given tools of the MCP source, and its key. */
  async function appWith(model: string, tools: string[]): Promise<string> {
    const made = await call('/api/core/app/create', { name: `${model} ${tools.join(' ')}`, model, tools: tools.map((name) => ({ sourceId, name })) });
    expect(made.status, made.text).toBe(200);
    return (await call('/api/support/openapi/create', { name: 'key', appId: made.body.data })).body.data;
  }
  const ask = (appKey: string, content: string) =>
    call('/api/v1/chat/completions', { detail: true, messages: [{ role: 'user', content }] }, appKey).then((r) => {
      expect(r.status, r.text).toBe(200);
      return { content: r.body.choices[0].message.content as string, steps: r.body.responseData as any[] };
    });

  beforeAll(async () => {
    mcp = await startMcpServer();
    const models = ['sim-tools', 'sim-tools:fn', 'sim-tools:prompt', 'sim-embed-384'];
    f = await startPlatformFixture({
      key: KEY,
      models,
      config: {
        llmModels: [
          { model: 'sim-tools', toolChoice: true },
          { model: 'sim-tools:fn', functionCall: true, toolChoice: false },
          { model: 'sim-tools:prompt', functionCall: false, toolChoice: false },
        ] as { model: string }[],
        vectorModels: [{ model: 'sim-embed-384' }],
      },
      overrides: { toolAllowPrivate: true, toolTimeoutMs: TOOL_TIMEOUT_MS },
    });
    const made = await call('/api/core/tool/source/create', {
      type: 'mcp',
      name: 'weather',
      url: `${mcp.url}/mcp`,
      headers: { Authorization: `Bearer ${MCP_TOKEN}` },
    });
    expect(made.status, made.text).toBe(200);
    sourceId = made.body.data;
  });
  afterAll(async () => {
    await f?.close();
    await mcp?.close();
  });

  it('calls the tool with the model’s arguments and answers with its result (OpenAI tools, non-stream)', async () => {
    const key = await appWith('sim-tools', ['forecast']);
    const r = await ask(key, 'What is the weather in Paris');
    expect(r.content).toBe('Tool result: Sunny in paris, 21 °C');
    const tool = r.steps.find((s) => s.moduleType === 'toolCall');
    expect(tool).toMatchObject({ toolName: 'forecast', sourceName: 'weather', toolInput: '{"city":"paris"}', toolRes: 'Sunny in paris, 21 °C', round: 1 });
    const answer = r.steps.find((s) => s.moduleType === 'chatNode');
    expect(answer).toMatchObject({ toolMode: 'toolChoice', toolRounds: 2, model: 'sim-tools' });
    expect(answer.modelCalls).toHaveLength(2);
    expect(answer.modelCalls.every((c: { requestId?: string }) => typeof c.requestId === 'string')).toBe(true);
  });

  it('streams the call and its result as events, then the answer', async () => {
    const key = await appWith('sim-tools', ['forecast']);
    const res = await fetch(`${f.p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ stream: true, detail: true, messages: [{ role: 'user', content: 'weather in Lyon' }] }),
    });
    expect(res.status).toBe(200);
    const sse = await readSse(res);
    const events = [...sse.raw.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => ({ name: m[1]!, data: m[2]! }));
    const names = events.map((e) => e.name);
    const called = names.indexOf('toolCall');
    expect(called).toBeGreaterThanOrEqual(0);
    expect(names.indexOf('toolResponse')).toBeGreaterThan(called);
    expect(names.lastIndexOf('answer')).toBeGreaterThan(names.indexOf('toolResponse'));
    expect(JSON.parse(events[called]!.data).tool).toMatchObject({ toolName: 'forecast', params: '{"city":"lyon"}' });
    expect(JSON.parse(events.find((e) => e.name === 'toolResponse')!.data).tool).toMatchObject({ response: 'Sunny in lyon, 21 °C', ok: true });
    const text = events
      .filter((e) => e.name === 'answer' && e.data !== '[DONE]')
      .map((e) => JSON.parse(e.data).choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('Tool result: Sunny in lyon, 21 °C');
  });

  it('uses the legacy functions, and a tool offered through the prompt to a model with neither', async () => {
    const fn = await ask(await appWith('sim-tools:fn', ['forecast']), 'weather in Oslo');
    expect(fn.content).toBe('Tool result: Sunny in oslo, 21 °C');
    expect(fn.steps.find((s) => s.moduleType === 'chatNode').toolMode).toBe('functionCall');

    const promptKey = await appWith('sim-tools:prompt', ['forecast']);
    const prompt = await ask(promptKey, 'weather in Rome');
    expect(prompt.content).toBe('Tool result: Sunny in rome, 21 °C');
    expect(prompt.steps.find((s) => s.moduleType === 'chatNode').toolMode).toBe('prompt');
    expect(prompt.steps.find((s) => s.moduleType === 'toolCall')).toMatchObject({ toolName: 'forecast', toolInput: '{"city":"rome"}' });
    // Streamed, the JSON of the call is held back: the asker sees only the answer.
    const res = await fetch(`${f.p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${promptKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'weather in Bern' }] }),
    });
    const streamed = (await readSse(res)).data.map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? '').join('');
    expect(streamed).toBe('Tool result: Sunny in bern, 21 °C');
  });

  it('calls an operation of an HTTP API described by OpenAPI, with the model’s arguments', async () => {
    const api = await startApiServer();
    try {
      const made = await call('/api/core/tool/source/create', {
        type: 'openapi',
        name: 'pets',
        url: `${api.url}/openapi.json`,
        headers: { Authorization: `Bearer ${API_TOKEN}` },
      });
      expect(made.status, made.text).toBe(200);
      const app = await call('/api/core/app/create', { name: 'pets', model: 'sim-tools', tools: [{ sourceId: made.body.data, name: 'getPet' }] });
      expect(app.status, app.text).toBe(200);
      const key = (await call('/api/support/openapi/create', { name: 'key', appId: app.body.data })).body.data;
      const r = await ask(key, 'tell me about pet 42');
      expect(r.steps.find((s) => s.moduleType === 'toolCall')).toMatchObject({ toolName: 'getPet', sourceName: 'pets', toolInput: '{"petId":"42"}' });
      expect(r.content).toMatch(/^Tool result: .*"id":"42".*"name":"Rex"/);
    } finally {
      await api.close();
    }
  });

  it('offers the knowledge-base search as a tool: the model searches for its own query, and the answer cites what it found', async () => {
    const datasetId = (await call('/api/core/dataset/create', { name: 'geo', vectorModel: 'sim-embed-384' })).body.data as string;
    const text = 'Glaciers are rivers of ice that move slowly downhill.\n\nVolcanoes form where magma reaches the surface.';
    const made = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'geo.md', text, chunkSize: 40 });
    expect(made.status, made.text).toBe(200);
    await expect
      .poll(async () => {
        const d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${made.body.data.collectionId}`)).body.data;
        return d.total > 0 && d.done === d.total;
      })
      .toBe(true);
    const app = await call('/api/core/app/create', {
      name: 'geo',
      model: 'sim-tools',
      datasets: [datasetId],
      search: { asTool: true, searchMode: 'fullTextRecall' },
    });
    expect(app.status, app.text).toBe(200);
    const key = (await call('/api/support/openapi/create', { name: 'key', appId: app.body.data })).body.data;
    const r = await ask(key, 'tell me about glaciers');
    expect(r.content).toMatch(/^Tool result: \[1\] geo\.md\nGlaciers are rivers of ice/);
    // Nothing was searched before the model asked: the one search is the tool's, for its own query.
    const searches = r.steps.filter((s) => s.moduleType === 'datasetSearchNode');
    expect(searches.map((s) => s.query)).toEqual(['glaciers']);
    expect(r.steps.indexOf(searches[0])).toBeLessThan(r.steps.findIndex((s) => s.moduleType === 'chatNode'));
    expect(r.steps.find((s) => s.moduleType === 'toolCall')).toMatchObject({
      toolName: 'search_knowledge_base',
      sourceName: 'Knowledge base',
      toolInput: '{"query":"glaciers"}',
    });
    expect(r.steps.find((s) => s.moduleType === 'chatNode').quoteCount).toBeGreaterThanOrEqual(1);
  });

  it('refuses an app naming a tool its team does not have, naming the field', async () => {
    const r = await call('/api/core/app/create', {
      name: 'bad',
      model: 'sim-tools',
      tools: [
        { sourceId, name: 'forecast' },
        { sourceId, name: 'nope' },
      ],
    });
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain('tools[1]');
    const twice = await call('/api/core/app/create', {
      name: 'twice',
      model: 'sim-tools',
      tools: [
        { sourceId, name: 'forecast' },
        { sourceId, name: 'forecast' },
      ],
    });
    expect(twice.status).toBe(400);
    expect(twice.text).toContain('tools');

    // A source deleted after: the app can still be saved (renamed), and its chat skips the tool, saying so.
    const temp = await call('/api/core/tool/source/create', {
      type: 'mcp',
      name: 'temp',
      url: `${mcp.url}/mcp`,
      headers: { Authorization: `Bearer ${MCP_TOKEN}` },
    });
    const app = await call('/api/core/app/create', { name: 'temp', model: 'sim-tools', tools: [{ sourceId: temp.body.data, name: 'forecast' }] });
    expect(app.status, app.text).toBe(200);
    expect((await f.call(`/api/core/tool/source/delete?id=${temp.body.data}`, { method: 'DELETE' })).status).toBe(200);
    const renamed = await f.call('/api/core/app/update', { method: 'PUT', json: { appId: app.body.data, name: 'renamed' } });
    expect(renamed.status, renamed.text).toBe(200);
    const key = (await call('/api/support/openapi/create', { name: 'key', appId: app.body.data })).body.data;
    const kiel = await ask(key, 'weather in Kiel');
    expect(kiel.steps.find((s) => s.moduleType === 'toolCall')).toBeUndefined();
    expect(kiel.steps.find((s) => s.moduleType === 'chatNode').error).toContain(`${temp.body.data}/forecast`);
  });

  it('reports a failing tool and a hanging one to the model, and the answer says so', async () => {
    const failing = await ask(await appWith('sim-tools', ['broken']), 'weather in Nice');
    expect(failing.content).toMatch(/^Tool result: Error: .*weather station is offline/);
    expect(failing.steps.find((s) => s.moduleType === 'toolCall')).toMatchObject({ toolName: 'broken' });
    expect(failing.steps.find((s) => s.moduleType === 'toolCall').error).toMatch(/offline/);

    const started = Date.now();
    const hanging = await ask(await appWith('sim-tools', ['hang']), 'weather in Graz');
    expect(Date.now() - started).toBeLessThan(TOOL_TIMEOUT_MS + 5000);
    expect(hanging.content).toMatch(/^Tool result: Error: /);
    expect(hanging.steps.find((s) => s.moduleType === 'toolCall').error).toMatch(/no answer within 1\.5 s/);
  });
});
