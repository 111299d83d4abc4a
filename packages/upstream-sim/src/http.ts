// Small HTTP helpers shared by the handlers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimConfig } from './types.js';

/** Sends an already-serialised JSON body (lets fixed replies be built once). */
export function sendJson(res: ServerResponse, status: number, data: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

export function send(res: ServerResponse, status: number, body: unknown): void {
  sendJson(res, status, JSON.stringify(body));
}

/** What is wrong with the key a request carries, if anything: none sent, one it does not take, or one whose quota is used up. */
export function keyProblem(cfg: SimConfig, key: string | undefined): 'missing' | 'wrong' | 'quota' | undefined {
  if (cfg.keys.length === 0) return undefined;
  if (!key) return 'missing';
  if (cfg.exhaustedKeys.includes(key)) return 'quota';
  return cfg.keys.includes(key) ? undefined : 'wrong';
}

/** An OpenAI-style error body: {"error":{"message","type","param","code"}}. */
export function errorJson(message: string, type: string, code: string | null = null, param: string | null = null): string {
  return JSON.stringify({ error: { message, type, param, code } });
}

export function oaiError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null, param: string | null = null): void {
  sendJson(res, status, errorJson(message, type, code, param));
}

export const modelNotFound = (res: ServerResponse, model: unknown): void =>
  oaiError(res, 404, `The model \`${model}\` does not exist`, 'invalid_request_error', 'model_not_found');

/** The whole request body as UTF-8 text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Unref'd so a pending delay (sim-slow, token delays) never keeps a test
 * process alive after close(); the listening server keeps the CLI alive.
 */
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });

const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** Google's error envelope: {"error":{"code","message","status"[,"details"]}}. */
export function googleError(res: ServerResponse, code: number, message: string, details?: unknown[]): void {
  const data = JSON.stringify({ error: { code, message, status: GOOGLE_STATUS[code] ?? 'UNKNOWN', ...(details ? { details } : {}) } });
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}
