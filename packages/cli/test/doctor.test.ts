// `kbchat doctor` as an operator runs it: a real `kbchat start` whose gateway
// relays to the upstream simulator (its fault models play the failures), and
// the real command, in --json and as a table.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, freePorts, plainEnv, REPO, startKbchat, stop } from './helpers.js';

const SIM_KEY = 'sim-upstream-secret-key-0123456789';
const WRONG_KEY = 'sk-wrong-upstream-key-9876543210';
const PLATFORM_KEY = 'kbchat-doctor-test-key-0123456789';

interface Check {
  name: string;
  model?: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
  remedy?: string;
}

/** Runs `kbchat doctor` to its end; stdout apart from stderr (--json prints only the document there). */
function doctor(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'doctor', ...args], { env, cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) => child.on('exit', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))));
}

const llm = (model: string, extra: Record<string, unknown> = {}) => ({ model, maxContext: 8000, maxResponse: 1000, ...extra });

describe('kbchat doctor against a running kbchat and the simulator', () => {
  let sim: UpstreamSim;
  let running: ChildProcess | undefined;
  let dataDir: string;
  let ports: [number, number];
  let env: NodeJS.ProcessEnv;
  let checks: Check[];
  let code: number | null;
  let printed: string;
  const of = (model: string | undefined, name?: string) => checks.filter((c) => c.model === model && (name === undefined || c.name === name));
  const one = (model: string | undefined, name: string) => {
    const found = of(model, name);
    expect(found, `${model} ${name} in ${JSON.stringify(checks, null, 1)}`).toHaveLength(1);
    return found[0]!;
  };

  beforeAll(async () => {
    sim = await startUpstreamSim({ key: SIM_KEY });
    dataDir = mkdtempSync(join(tmpdir(), 'kbchat-doctor-'));
    ports = await freePorts();
    // What the platform starts with: every model the gateway serves.
    const started = {
      llmModels: [
        llm('sim-chat', { toolChoice: true }),
        llm('sim-tools', { toolChoice: true }),
        llm('sim-503'),
        llm('sim-drop'),
        llm('sim-strict', { defaultConfig: { temperature: 0 } }),
      ],
      vectorModels: [{ model: 'sim-embed-384' }, { model: 'sim-embed-raw-384' }, { model: 'sim-embed-64' }],
    };
    const startedPath = join(dataDir, 'config.started.json');
    writeFileSync(startedPath, JSON.stringify(started));
    const base = plainEnv({
      INITIAL_API_KEY: PLATFORM_KEY,
      LOCAL_MODELS: 'off',
      SIM_API_KEY: SIM_KEY,
      SIM_BASE_URL: `${sim.url}/v1`,
      SIM_MODELS: 'sim-chat,sim-tools,sim-503,sim-drop,sim-strict,sim-embed-384,sim-embed-raw-384,sim-embed-64',
    });
    const s = await startKbchat(['start', '--data-dir', dataDir, '--gateway-port', String(ports[1]), '--port', String(ports[0])], {
      ...base,
      CONFIG_PATH: startedPath,
    });
    running = s.child;
    const platform = `http://127.0.0.1:${ports[0]}`;
    const gateway = `http://127.0.0.1:${ports[1]}`;

    // A knowledge base on sim-embed-64, which the edited config.json below no longer has.
    const created = await fetch(`${platform}/api/core/dataset/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PLATFORM_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'old manuals', vectorModel: 'sim-embed-64' }),
    });
    expect(created.status).toBe(200);
    // A channel whose key the upstream refuses (the simulator ignores what follows ':').
    const rootToken = readFileSync(join(dataDir, 'platform-gateway-token'), 'utf8').trim();
    const channel = await fetch(`${gateway}/api/channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rootToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'wrong key', type: 'openai', base_url: `${sim.url}/v1`, key: WRONG_KEY, models: ['sim-chat:wrong-key'] }),
    });
    expect(channel.status).toBe(201);

    // config.json as edited since the start: a model no channel serves, the wrong-key one, and sim-embed-64 gone.
    const edited = {
      ...started,
      llmModels: [...started.llmModels, llm('sim-chat:wrong-key'), llm('sim-missing')],
      vectorModels: started.vectorModels.filter((m) => m.model !== 'sim-embed-64'),
    };
    const editedPath = join(dataDir, 'config.json');
    writeFileSync(editedPath, JSON.stringify(edited));
    env = { ...base, CONFIG_PATH: editedPath };
    const r = await doctor(['--json', '--data-dir', dataDir, '--port', String(ports[0]), '--gateway-port', String(ports[1])], env);
    code = r.code;
    printed = r.stdout + r.stderr;
    checks = JSON.parse(r.stdout).checks;
  }, 240_000);

  afterAll(async () => {
    if (running) await stop(running);
    await sim?.close();
  });

  it('checks the stores, ports, services and balance first, and fails the run as a whole', () => {
    expect(code).toBe(1);
    expect(checks.slice(0, 4).map((c) => c.name)).toEqual(['gateway store', 'platform store', 'platform port', 'gateway port']);
    for (const name of ['gateway store', 'platform store']) expect(one(undefined, name).detail).toMatch(/embedded at .*open in kbchat \(pid \d+/);
    expect(one(undefined, 'platform port')).toMatchObject({
      status: 'ok',
      detail: `${ports[0]} on 127.0.0.1: held by the running kbchat of this data dir (pid ${running!.pid})`,
    });
    expect(one(undefined, 'gateway port')).toMatchObject({
      status: 'ok',
      detail: `${ports[1]} on 127.0.0.1: held by the running kbchat of this data dir (pid ${running!.pid})`,
    });
    expect(one(undefined, 'gateway').status).toBe('ok');
    expect(one(undefined, 'platform token')).toMatchObject({ status: 'ok', detail: 'user root, balance 200.00' });
    expect(one(undefined, 'platform').status).toBe('ok');
    // Nothing the doctor printed carries an upstream key.
    expect(printed).not.toContain(SIM_KEY);
    expect(printed).not.toContain(WRONG_KEY);
  });

  it('finds the kbchat of the data dir by its store locks: names its process and checks its ports, none given', async () => {
    const r = await doctor(['--json', '--data-dir', dataDir], env);
    const found = JSON.parse(r.stdout).checks as Check[];
    const row = (name: string) => found.find((c) => c.name === name && c.model === undefined)!;
    const listening = `listening: gateway on 127.0.0.1:${ports[1]}, platform on 127.0.0.1:${ports[0]}`;
    for (const name of ['gateway store', 'platform store'])
      expect(row(name).detail).toMatch(new RegExp(`open in kbchat \\(pid ${running!.pid}, .*\\), ${listening}$`));
    const held = `held by the running kbchat of this data dir (pid ${running!.pid})`;
    expect(row('platform port')).toMatchObject({ status: 'ok', detail: `${ports[0]} on 127.0.0.1: ${held}` });
    expect(row('gateway port')).toMatchObject({ status: 'ok', detail: `${ports[1]} on 127.0.0.1: ${held}` });
    expect(row('gateway')).toMatchObject({ status: 'ok' });
    expect(row('gateway').detail).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ports[1]}: pglite store`));
    expect(row('platform token')).toMatchObject({ status: 'ok', detail: 'user root, balance 200.00' });
    expect(row('platform')).toMatchObject({ status: 'ok' });
    expect(row('platform').detail).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ports[0]}: `));

    // A port given that is not its own: the row says where the data dir's kbchat listens.
    const [elsewhere] = await freePorts();
    const given = JSON.parse((await doctor(['--json', '--data-dir', dataDir, '--port', String(elsewhere)], env)).stdout).checks as Check[];
    const port = given.find((c) => c.name === 'platform port')!;
    expect(port).toMatchObject({
      status: 'warn',
      detail: `${elsewhere} on 127.0.0.1: free; the kbchat of this data dir (pid ${running!.pid}) listens on 127.0.0.1:${ports[0]}`,
    });
    expect(port.remedy).toBe(`to check that kbchat, leave the port out or give --port ${ports[0]}`);
  }, 120_000);

  it('passes the models that work, every step of them', () => {
    expect(of('sim-tools').map((c) => [c.name, c.status])).toEqual([
      ['upstream', 'ok'],
      ['gateway request', 'ok'],
      ['platform request', 'ok'],
      ['tool call', 'ok'],
      ['tool result', 'ok'],
    ]);
    expect(one('sim-tools', 'tool call').detail).toMatch(/^tool_calls: get_weather\(\{"city":/);
    expect(one('sim-tools', 'tool result').detail).toMatch(/answered from the result: "Tool result: .*23\.4/);
    expect(one('sim-tools', 'upstream').detail).toMatch(new RegExp(`channel sim \\(from environment\\) \\(${sim.url}/v1\\): 200 in \\d+ ms`));
    expect(of('sim-embed-384').map((c) => [c.name, c.status])).toEqual([
      ['upstream', 'ok'],
      ['embeddings', 'ok'],
      ['vector norm', 'ok'],
      ['platform request', 'ok'],
    ]);
    expect(one('sim-embed-384', 'embeddings').detail).toMatch(/^384 dimensions/);
  });

  it('stops sim-503 at the upstream with its remedy, before the gateway and the platform', () => {
    const rows = of('sim-503');
    expect(rows.map((c) => c.name)).toEqual(['upstream']);
    expect(rows[0]).toMatchObject({ status: 'fail' });
    expect(rows[0]!.detail).toMatch(/503: The server is overloaded/);
    expect(rows[0]!.remedy).toMatch(/the upstream is failing \(503\)/);
  });

  it('names the rejected key of a channel', () => {
    const row = one('sim-chat:wrong-key', 'upstream');
    expect(row.status).toBe('fail');
    expect(row.detail).toMatch(/channel wrong key .*401/);
    expect(row.remedy).toMatch(/the channel's key is rejected: update it in the gateway console, Channels/);
  });

  it('tells a chat model that ignores tools to turn toolChoice and functionCall off', () => {
    expect(of('sim-chat').map((c) => [c.name, c.status])).toEqual([
      ['upstream', 'ok'],
      ['gateway request', 'ok'],
      ['platform request', 'ok'],
      ['tool call', 'fail'],
    ]);
    const row = one('sim-chat', 'tool call');
    expect(row.detail).toMatch(/answered with text and no tool_calls in the stream: "Echo:/);
    expect(row.remedy).toContain('set "toolChoice": false and "functionCall": false for sim-chat in config.json');
  });

  it('repeats a broken or empty stream without stream and shows what that said', () => {
    const dropped = one('sim-drop', 'gateway request');
    expect(dropped.status).toBe('fail');
    // The drop comes before or after the gateway has passed on the first words: either way the stream fails, and without stream the model answers.
    expect(dropped.detail).toMatch(
      /^(the stream broke off after "Echo: .*": upstream stream ended abruptly|the streamed request failed: 502 get request url failed: .*connection closed).*\(request id:? \w+\); without stream it answers: "Echo:/,
    );
    expect(dropped.remedy).toMatch(/its stream breaks off/);
    expect(of('sim-drop').map((c) => c.name)).toEqual(['upstream', 'gateway request']);
    // sim-strict streams nothing for temperature 0 (its defaultConfig): the non-stream answer has the reason.
    const empty = one('sim-strict', 'gateway request');
    expect(empty.status).toBe('fail');
    expect(empty.detail).toMatch(
      /^the stream ended empty: .*; without stream: 400 Invalid parameter: temperature must be greater than 0 \(request id:? \w+\)$/,
    );
    expect(empty.remedy).toMatch(/defaultConfig/);
  });

  it('warns that a vector model does not normalise, and the platform refuses it', () => {
    const norm = one('sim-embed-raw-384', 'vector norm');
    expect(norm.status).toBe('warn');
    expect(norm.detail).toMatch(/^3\.000, above 1: the model does not normalise its vectors, and its scores are meaningless/);
    expect(one('sim-embed-raw-384', 'platform request').status).toBe('fail');
  });

  it('reports config.json models the gateway does not serve, and knowledge bases on a model no longer configured', () => {
    const missing = one(undefined, 'gateway models');
    expect(missing.status).toBe('fail');
    expect(missing.detail).toBe('config.json names models the gateway does not serve: sim-missing');
    expect(one('sim-missing', 'upstream')).toMatchObject({ status: 'fail', detail: 'no channel of the gateway lists it' });
    const kbs = one(undefined, 'knowledge bases');
    expect(kbs.status).toBe('fail');
    expect(kbs.detail).toMatch(/"old manuals" \(\w+\) on sim-embed-64/);
    expect(kbs.remedy).toMatch(/put sim-embed-64 back in config.json's vectorModels/);
    expect(checks.at(-1)!.name).toBe('knowledge bases');
  });

  it('prints the same checks as a table, one row each, without colour when not on a terminal', async () => {
    const r = await doctor(['--data-dir', dataDir, '--port', String(ports[0]), '--gateway-port', String(ports[1])], env);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('\x1b[');
    const rows = r.stdout.split('\n').filter((l) => /^(OK|WARN|FAIL|SKIP) /.test(l));
    expect(rows).toHaveLength(checks.length);
    // The table has what the JSON has: the runs see the same services, so the rows match by name, model and status.
    rows.forEach((row, i) => {
      const c = checks[i]!;
      expect(row).toMatch(
        new RegExp(
          `^${{ ok: 'OK', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' }[c.status]}\\s+${c.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+${(c.model ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
        ),
      );
    });
    // After the first run's requests, the same balance: the sim models are unpriced, and the doctor charges nothing itself.
    expect(rows.find((l) => /^OK\s+platform token /.test(l))).toMatch(/user root, balance 200\.00$/);
    const remedies = r.stdout.split('\n').filter((l) => /^\s+-> fix: /.test(l));
    expect(remedies).toHaveLength(checks.filter((c) => c.remedy).length);
    expect(r.stdout).toMatch(new RegExp(`${checks.length} checks: \\d+ ok, \\d+ warnings, \\d+ failed, 0 skipped`));
  }, 120_000);
});

describe('kbchat doctor with nothing running', () => {
  let other: Server | undefined;
  afterAll(() => other?.close());

  it('says the ports are free or who holds them, skips the models with the reason, and exits 1', async () => {
    const [platformPort, gatewayPort] = await freePorts();
    // Another program on the gateway's port: not kbchat, so the remap is given.
    other = createServer((s) => s.destroy());
    await new Promise<void>((resolve) => other!.listen(gatewayPort, '127.0.0.1', resolve));
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-doctor-idle-'));
    const r = await doctor(
      ['--json', '--data-dir', dataDir, '--port', String(platformPort), '--gateway-port', String(gatewayPort)],
      plainEnv({ INITIAL_API_KEY: PLATFORM_KEY }),
    );
    expect(r.code).toBe(1);
    const checks = JSON.parse(r.stdout).checks as Check[];
    const by = (name: string) => checks.filter((c) => c.name === name);
    expect(by('platform port')[0]).toMatchObject({ status: 'ok', detail: `${platformPort} on 127.0.0.1: free` });
    const gw = by('gateway port')[0]!;
    expect(gw).toMatchObject({ status: 'fail', detail: `${gatewayPort} on 127.0.0.1: taken by another program (not kbchat)` });
    expect(gw.remedy).toMatch(/^kbchat start --gateway-port \d+ \(or GATEWAY_PORT=\d+\)$/);
    expect(Number(/--gateway-port (\d+)/.exec(gw.remedy!)![1])).toBeGreaterThan(gatewayPort);
    expect(by('gateway')[0]).toMatchObject({ status: 'fail' });
    expect(by('gateway')[0]!.remedy).toMatch(/start it \(kbchat start/);
    expect(by('platform')[0]).toMatchObject({ status: 'fail' });
    // The embedded default's models, not checked, saying why.
    expect(by('model').map((c) => [c.model, c.status])).toEqual([
      ['local-extractive', 'skip'],
      ['local-embed', 'skip'],
    ]);
    expect(by('model')[0]!.detail).toMatch(/not checked: the gateway at http:\/\/127\.0\.0\.1:\d+ does not answer/);
  }, 60_000);

  it('explains itself with --help: the order of the checks, where the upstream is called from, the exit status', async () => {
    const r = await doctor(['--help'], plainEnv());
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^kbchat doctor \[options\]/);
    expect(r.stdout).toContain('POST /api/channels/:id/test');
    expect(r.stdout).toContain('Exit status: 0 when nothing failed (warnings do not fail), 1 otherwise.');
  });
});
