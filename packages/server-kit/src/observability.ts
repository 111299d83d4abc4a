// What both services' /readyz and /metrics share: the two routes and the hook
// that counts requests by route pattern, readiness checks run with a time
// limit each, and who may read /metrics.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/** Each readiness check's time limit: a probe gets its answer well within the usual 5 s. */
export const READY_CHECK_TIMEOUT_MS = 2000;

export interface ObservabilityRouteDeps {
  metrics: { httpRequest(method: string, route: string, status: number, seconds: number): void; readonly contentType: string; text(): Promise<string> };
  metricsToken?: string;
  /** Readiness checks by name; each fails by rejecting. */
  checks: Record<string, () => Promise<unknown>>;
  /**
   * What is degraded but never makes the service unready (the gateway's rate
   * limits counted per process while Redis is away): each gives a line or
   * undefined, shown under `notes` when it gives one.
   */
  notes?: Record<string, () => string | undefined>;
  /** What /readyz checks, for the API document. */
  readySummary: string;
  /** The service's own error (its envelope) for a refused scrape. */
  refusal(status: 401 | 403, message: string): Error;
}

/** GET /metrics, GET /readyz, and the onResponse hook that counts what Fastify answers. */
export function observabilityRoutes(app: FastifyInstance, o: ObservabilityRouteDeps): void {
  app.addHook('onResponse', (req, reply, done) => {
    // The pattern (/api/users/:id), never the URL: a scanner's random paths all count as one series.
    o.metrics.httpRequest(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  const metricsDoc = {
    summary: 'Prometheus metrics (text format 0.0.4)',
    description:
      'With METRICS_TOKEN set: that token as a Bearer token, from anywhere. Without: callers on this machine only (a loopback peer, no X-Forwarded-For); 403 otherwise.',
    security: [],
  };
  app.get('/metrics', { schema: metricsDoc }, async (req, reply) => {
    const refused = metricsRefusal({
      token: o.metricsToken,
      authorization: req.headers.authorization,
      remoteAddress: req.socket.remoteAddress,
      forwarded: req.headers['x-forwarded-for'] !== undefined,
    });
    if (refused) throw o.refusal(refused.status, refused.message);
    reply.header('content-type', o.metrics.contentType);
    return o.metrics.text();
  });

  app.get('/readyz', { schema: { summary: o.readySummary, security: [] } }, async (_req, reply) => {
    const result = await readiness(o.checks, READY_CHECK_TIMEOUT_MS);
    reply.code(result.ok ? 200 : 503);
    const notes = Object.entries(o.notes ?? {}).flatMap(([name, note]) => {
      const line = note();
      return line ? [[name, line] as const] : [];
    });
    return notes.length ? { ...result, notes: Object.fromEntries(notes) } : result;
  });
}

/** A check that fails while migrations this build knows have not run. */
export function migrationsCheck(pending: () => Promise<string[]>): () => Promise<void> {
  return async () => {
    const left = await pending();
    if (left.length) throw new Error(`not run yet: ${left.join(', ')}`);
  };
}

export interface CheckResult {
  ok: boolean;
  /** How long the check took. */
  ms: number;
  /** Why it failed. */
  error?: string;
}

export interface Readiness {
  ok: boolean;
  /** The names of the checks that failed. */
  failing: string[];
  checks: Record<string, CheckResult>;
}

/**
 * Runs every check at once, each bounded by `timeoutMs` (a store or gateway
 * that hangs fails its check instead of holding the probe); a check fails by
 * rejecting.
 */
export async function readiness(checks: Record<string, () => Promise<unknown>>, timeoutMs: number): Promise<Readiness> {
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((name) => runCheck(checks[name]!, timeoutMs)));
  const out: Record<string, CheckResult> = {};
  names.forEach((name, i) => (out[name] = results[i]!));
  const failing = names.filter((_, i) => !results[i]!.ok);
  return { ok: failing.length === 0, failing, checks: out };
}

async function runCheck(check: () => Promise<unknown>, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([check(), late]);
    return { ok: true, ms: ms() };
  } catch (err) {
    return { ok: false, ms: ms(), error: (err as Error)?.message ?? String(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** A loopback address: 127.0.0.0/8 or ::1, IPv4-mapped or not. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

export type MetricsRefusal = { status: 401 | 403; message: string };

/**
 * Who may read /metrics. With METRICS_TOKEN set: a caller that sends it as a
 * Bearer token, from anywhere. Without: only a caller on this machine (a
 * loopback peer, and no X-Forwarded-For, which a reverse proxy in front adds).
 * Returns undefined when allowed, else the answer to give.
 */
export function metricsRefusal(o: { token?: string; authorization?: string; remoteAddress?: string; forwarded: boolean }): MetricsRefusal | undefined {
  if (o.token) {
    const sent = /^Bearer\s+(.+)$/i.exec(o.authorization ?? '')?.[1]?.trim() ?? '';
    if (sent && sameSecret(sent, o.token)) return undefined;
    return { status: 401, message: 'GET /metrics needs "Authorization: Bearer <METRICS_TOKEN>"' };
  }
  if (isLoopback(o.remoteAddress) && !o.forwarded) return undefined;
  return { status: 403, message: '/metrics is served to this machine only; set METRICS_TOKEN to let a scraper elsewhere in with that Bearer token' };
}

/** Compares digests, so that the time taken says nothing about the secret. */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
