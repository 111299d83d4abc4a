// The deployment files (Dockerfile, compose.yaml at the repository root),
// checked without a container runtime, which these machines do not have:
// compose.yaml against the Compose Specification's JSON schema, then what
// the schema cannot know (that the commands, variables, health routes and
// copied paths exist in this repository). docs/deployment.md says what was
// and was not run.
//
// fixtures/compose-spec.json is schema/compose-spec.json of
// github.com/compose-spec/compose-spec at 170098ba07d9f53c383a41bfd4c5166b0a4529a6
// (2026-06-23), unchanged; Copyright 2020 The Compose Specification Authors,
// Apache License 2.0.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../src/args.js';

const REPO = join(import.meta.dirname, '../../..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');

type Service = {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
};
type Compose = { services: Record<string, Service>; volumes?: Record<string, unknown> };

const composeText = read('compose.yaml');
const compose = parse(composeText) as Compose;
const schema = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures/compose-spec.json'), 'utf8')) as object;

/** The services that run this repository's image (built from the Dockerfile). */
const kbchatServices = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

/**
 * Compose's interpolation (${VAR}, ${VAR:-default}, ${VAR-default},
 * ${VAR:?error}, ${VAR?error}, $$), enough to see the file as Compose would
 * with a given environment; the required variables that are missing are listed.
 */
function interpolate(value: unknown, env: Record<string, string>, missing: Set<string>): unknown {
  if (typeof value === 'string') {
    return value.replace(
      /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g,
      (whole, name: string | undefined, colon: string, op: string, arg: string) => {
        if (!name) return '$';
        const set = env[name] !== undefined && (colon !== ':' || env[name] !== '');
        if (set) return env[name]!;
        if (op === '?') {
          missing.add(name);
          return '';
        }
        return op === '-' ? arg : '';
      },
    );
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env, missing));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, missing)]));
  return value;
}

const REQUIRED = { INITIAL_ROOT_TOKEN: 'sk-test-token', ROOT_PASSWORD: 'a-password', MARIADB_PASSWORD: 'mariadb-pw', POSTGRES_PASSWORD: 'postgres-pw' };

/** Every non-test TypeScript file of the packages' sources. */
function sourceFiles(dir = join(REPO, 'packages')): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name === 'test') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|tsx|mjs|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function validator() {
  // strict: false because the schema uses annotations Ajv's strict mode does not list (e.g. "deprecated").
  const ajv = new Ajv({ allErrors: true, strict: false });
  // The schema names draft-07 by its https address; Ajv knows it by http. The same
  // meta-schema under that name, so that the schema itself is checked too.
  const draft7 = createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json') as { $id: string };
  ajv.addMetaSchema({ ...draft7, $id: (schema as { $schema: string }).$schema });
  return ajv.compile(schema);
}

describe('compose.yaml', () => {
  it('is valid against the Compose Specification schema, as written and once interpolated', () => {
    const validate = validator();
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true);
    const missing = new Set<string>();
    const resolved = interpolate(compose, REQUIRED, missing);
    expect([...missing]).toEqual([]);
    expect(validate(resolved), JSON.stringify(validate.errors, null, 2)).toBe(true);
  });

  it('the schema check can fail: a misspelt key or a wrong type is refused', () => {
    const validate = validator();
    const misspelt = structuredClone(compose) as unknown as { services: Record<string, Record<string, unknown>> };
    misspelt.services.gateway!.helthcheck = misspelt.services.gateway!.healthcheck;
    expect(validate(misspelt)).toBe(false);
    const wrongType = structuredClone(compose) as unknown as { services: Record<string, Record<string, unknown>> };
    wrongType.services.platform!.depends_on = 'gateway';
    expect(validate(wrongType)).toBe(false);
  });

  it('has the seed layout: gateway, platform, worker, MariaDB and PostgreSQL with pgvector', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['gateway', 'mariadb', 'platform', 'postgres', 'worker']);
    expect(compose.services.mariadb!.image).toMatch(/^mariadb:/);
    expect(compose.services.postgres!.image).toMatch(/^pgvector\/pgvector:/);
    const commands = Object.fromEntries(kbchatServices.map(([name, s]) => [name, s.command?.[0]]));
    expect(commands).toEqual({ gateway: 'gateway', platform: 'platform', worker: 'worker' });
    const missing = new Set<string>();
    const resolved = interpolate(compose, REQUIRED, missing) as Compose;
    expect(resolved.services.gateway!.environment!.GATEWAY_DATABASE_URL).toMatch(/^mysql:\/\/kbchat:mariadb-pw@mariadb:3306\//);
    for (const name of ['platform', 'worker']) {
      const env = resolved.services[name]!.environment!;
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/kbchat:postgres-pw@postgres:5432\//);
      expect(env.GATEWAY_URL).toBe('http://gateway:3001');
      // The token the platform and the worker use is the one the gateway creates at its first start.
      expect(env.GATEWAY_TOKEN).toBe(resolved.services.gateway!.environment!.INITIAL_ROOT_TOKEN);
    }
    // The worker service does the indexing; the platform process runs none.
    expect(resolved.services.platform!.environment!.PLATFORM_WORKER).toBe('off');
  });

  it('asks for the secrets it needs instead of shipping defaults', () => {
    const missing = new Set<string>();
    interpolate(compose, {}, missing);
    expect([...missing].sort()).toEqual(Object.keys(REQUIRED).sort());
  });

  it('every service has a health check, and every dependency waits for one', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.healthcheck?.disable, name).not.toBe(true);
      expect(service.healthcheck?.test?.length, `${name} has no healthcheck test`).toBeGreaterThan(1);
      expect(['CMD', 'CMD-SHELL'], name).toContain(service.healthcheck!.test![0]);
      for (const [dependency, how] of Object.entries(service.depends_on ?? {})) {
        expect(compose.services[dependency], `${name} depends on ${dependency}`).toBeDefined();
        expect(how.condition, `${name} -> ${dependency}`).toBe('service_healthy');
      }
    }
  });

  it('the HTTP health checks ask a route the services have, on the port they listen on', () => {
    const sources = sourceFiles().map((f) => readFileSync(f, 'utf8'));
    const ports: Record<string, number> = { gateway: 3001, platform: 3000 };
    for (const [name, port] of Object.entries(ports)) {
      const test = compose.services[name]!.healthcheck!.test!.join(' ');
      const url = /http:\/\/127\.0\.0\.1:(\d+)(\/[\w/-]*)/.exec(test);
      expect(url, `${name}'s healthcheck fetches no local URL`).not.toBeNull();
      expect(Number(url![1])).toBe(port);
      const route = url![2]!;
      expect(
        sources.some((s) => s.includes(`app.get('${route}'`)),
        `no GET ${route} route in the sources`,
      ).toBe(true);
      expect(
        compose.services[name]!.ports!.some((p) => p.endsWith(`:${port}`)),
        `${name} publishes ${port}`,
      ).toBe(true);
    }
    // The worker's check reads a table the platform's migrations create.
    const workerTest = compose.services.worker!.healthcheck!.test!.join(' ');
    const table = /from (\w+)/.exec(workerTest)?.[1];
    expect(table).toBeDefined();
    expect(
      sources.some((s) => s.includes(`createTable('${table}')`)),
      `no migration creates ${table}`,
    ).toBe(true);
  });

  it('runs only kbchat commands that exist', () => {
    const commands = USAGE.split('Commands:')[1]!
      .split('Options:')[0]!
      .match(/^ {2}(\w+)/gm)!
      .map((c) => c.trim());
    expect(commands).toContain('gateway');
    for (const [name, service] of kbchatServices) {
      expect(commands, `${name} runs kbchat ${service.command?.[0]}`).toContain(service.command?.[0]);
    }
  });

  it('sets for kbchat only variables the code reads, and every known provider key', () => {
    const sources = sourceFiles().map((f) => readFileSync(f, 'utf8'));
    const readsExactly = (name: string) => sources.some((s) => new RegExp(`\\benv\\.${name}\\b|\\benv\\[['"]${name}['"]\\]|['"\`]${name}['"\`]`).test(s));
    // <PROVIDER>_API_KEY / _BASE_URL / _MODELS are read by pattern (channels/service.ts) for the presets' prefixes.
    const providersSource = read('packages/gateway/src/providers/index.ts');
    const presets = [...providersSource.matchAll(/\{\s*env: '([A-Z0-9_]+)'/g)].map((m) => m[1]!);
    expect(presets).toContain('OPENAI');
    const syncSource = read('packages/gateway/src/channels/service.ts');
    expect(syncSource).toContain('_API_KEY$/');
    expect(syncSource).toContain('_BASE_URL`]');
    const readsByPattern = (name: string) => presets.some((p) => new RegExp(`^${p}_(API_KEY|BASE_URL|MODELS)$`).test(name));
    for (const [service, { environment }] of kbchatServices) {
      for (const name of Object.keys(environment ?? {})) {
        expect(readsExactly(name) || readsByPattern(name), `${service} sets ${name}, which no source reads`).toBe(true);
      }
    }
    // Every provider the gateway knows gets its key from the host's environment, empty by default (an empty key makes no channel).
    const gatewayEnv = compose.services.gateway!.environment!;
    for (const p of presets) expect(gatewayEnv[`${p}_API_KEY`], `${p}_API_KEY`).toBe(`\${${p}_API_KEY:-}`);
  });

  it('publishes MariaDB on a host port that a variable remaps', () => {
    const at = (env: Record<string, string>) => {
      const resolved = interpolate(compose, { ...REQUIRED, ...env }, new Set()) as Compose;
      return resolved.services.mariadb!.ports!.map((p) => p.split(':').slice(-2).join(':'));
    };
    expect(at({})).toEqual(['3306:3306']);
    expect(at({ MARIADB_PORT: '3307' })).toEqual(['3307:3306']);
  });

  it('keeps every store on a declared named volume', () => {
    const dataPaths: Record<string, string> = {
      gateway: '/data',
      platform: '/data',
      worker: '/data',
      mariadb: '/var/lib/mysql',
      postgres: '/var/lib/postgresql/data',
    };
    for (const [name, path] of Object.entries(dataPaths)) {
      const mounts = (compose.services[name]!.volumes ?? []).map((v) => v.split(':'));
      const mount = mounts.find(([, target]) => target === path);
      expect(mount, `${name} has no volume at ${path}`).toBeDefined();
      expect(Object.keys(compose.volumes ?? {}), `${name}'s volume ${mount![0]} is not declared`).toContain(mount![0]);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  // Instructions with their continuation lines joined, comments dropped.
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: { from: string; lines: string[] }[] = [];
  for (const line of instructions) {
    if (/^FROM\s/i.test(line)) stages.push({ from: line, lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  const runtime = stages.at(-1)!;

  it('builds in one stage and runs from another, installing with npm ci in both', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(
      stages[0]!.lines.some((l) => /^RUN .*\bnpm ci\b/.test(l) && !/--omit=dev/.test(l)),
      'the build stage runs a full npm ci',
    ).toBe(true);
    expect(
      runtime.lines.some((l) => /^RUN .*\bnpm ci\b.*--omit=dev/.test(l)),
      'the runtime stage runs npm ci --omit=dev',
    ).toBe(true);
    expect(runtime.from).toMatch(/^FROM node:20/);
  });

  it('runs as a user that is not root', () => {
    const users = runtime.lines.filter((l) => /^USER\s/i.test(l)).map((l) => l.split(/\s+/)[1]!);
    expect(users.length, 'no USER in the runtime stage').toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users.at(-1));
    // Nothing after the last USER switches back.
    const lastUser = runtime.lines.findLastIndex((l) => /^USER\s/i.test(l));
    expect(
      runtime.lines.slice(lastUser).some((l) => /^RUN\s/i.test(l)),
      'a RUN after USER would need root',
    ).toBe(false);
  });

  it('starts kbchat, exposes both ports and keeps its data dir on a volume', () => {
    expect(runtime.lines).toContain('ENTRYPOINT ["node", "packages/cli/bin/kbchat.js"]');
    expect(existsSync(join(REPO, 'packages/cli/bin/kbchat.js'))).toBe(true);
    expect(
      runtime.lines
        .find((l) => l.startsWith('EXPOSE'))
        ?.split(/\s+/)
        .slice(1)
        .sort(),
    ).toEqual(['3000', '3001']);
    expect(runtime.lines.join('\n')).toMatch(/DATA_DIR=\/data/);
    expect(runtime.lines).toContain('VOLUME ["/data"]');
  });

  it('copies into the runtime every workspace package.json and the built code the cli needs', () => {
    const copied = runtime.lines
      .filter((l) => /^COPY --from=build\s/.test(l))
      .flatMap((l) => l.split(/\s+/).slice(2, -1))
      .map((p) => p.replace(/^\/app\//, ''));
    // npm ci checks the lock file against every workspace's package.json.
    const root = JSON.parse(read('package.json')) as { workspaces: string[] };
    for (const ws of root.workspaces) expect(copied, `${ws}/package.json`).toContain(`${ws}/package.json`);
    // The cli's packages and theirs, compiled; the web app, built.
    const needed = new Set<string>();
    const visit = (name: string) => {
      const dir = `packages/${name.replace('@kbchat/', '')}`;
      if (needed.has(dir)) return;
      needed.add(dir);
      const pkg = JSON.parse(read(`${dir}/package.json`)) as { dependencies?: Record<string, string> };
      for (const dep of Object.keys(pkg.dependencies ?? {})) if (dep.startsWith('@kbchat/')) visit(dep);
    };
    visit('@kbchat/cli');
    expect(needed.size).toBeGreaterThanOrEqual(5);
    for (const dir of needed) expect(copied, `${dir}/dist`).toContain(`${dir}/dist`);
    expect(copied).toContain('packages/web/dist');
    // Files the code loads at run time from beside dist/ (local-models' worker thread, the bin).
    expect(copied).toContain('packages/local-models/worker');
    expect(copied).toContain('packages/cli/bin');
    // Every copied path that is not a build output is in the repository.
    for (const path of copied.filter((p) => !p.endsWith('/dist'))) expect(existsSync(join(REPO, path)), path).toBe(true);
  });

  it('leaves node_modules and build outputs out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    expect(ignored).toContain('**/node_modules');
    expect(ignored).toContain('**/dist');
  });
});
