// Small node:http helpers: bounded JSON bodies and OpenAI-shaped errors.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openAIError } from '@kbchat/shared';

/** An error a client caused or should see, with its HTTP status and OpenAI fields. */
export class LocalModelError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
    readonly param: string | null = null,
    readonly type = status >= 500 ? 'server_error' : 'invalid_request_error',
  ) {
    super(message);
  }
}

export function invalidField(param: string, message: string): LocalModelError {
  return new LocalModelError(400, message, 'invalid_field', param);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown): void {
  const e =
    err instanceof LocalModelError
      ? err
      : new LocalModelError(500, `local model failed: ${err instanceof Error ? err.message : String(err)}`, 'local_model_error');
  if (res.headersSent) {
    // A stream already started: the error goes into it, the way the gateway's own streams end.
    if (!res.writableEnded) res.end(`data: ${JSON.stringify(openAIError(e.message, e.type, e.code, e.param))}\n\n`);
    return;
  }
  sendJson(res, e.status, openAIError(e.message, e.type, e.code, e.param));
}

/** Reads and parses a JSON object body; 413 past maxBytes, 400 for bad JSON. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    parts.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch (err) {
    throw new LocalModelError(400, `The request body is not valid JSON: ${(err as Error).message}`, 'invalid_json');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new LocalModelError(400, 'The request body must be a JSON object.', 'invalid_json');
  }
  return body as Record<string, unknown>;
}

function tooLarge(maxBytes: number): LocalModelError {
  return new LocalModelError(413, `The request body is larger than ${maxBytes} bytes.`, 'request_too_large');
}

export function modelNotFound(model: string, available: string[]): LocalModelError {
  return new LocalModelError(
    404,
    `The model '${model}' does not exist here; local models available: ${available.join(', ') || 'none'}.`,
    'model_not_found',
    'model',
  );
}
