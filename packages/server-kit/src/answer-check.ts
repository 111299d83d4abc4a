// Response schemas: a route declares the answer it makes (`schema: { response:
// { 200: zodSchema } }`), the API document shows it, and this serializer
// compiler checks each answer against it before sending it as JSON.stringify
// would (nothing is stripped or reordered, so what clients see is unchanged).
//
// An answer that breaks its contract is a bug of ours, not of the request: with
// KBCHAT_STRICT_ANSWERS=1 (the test suite sets it) it is a 500, as is a key the
// schema does not name (zod would drop it unseen), so that a test
// fails on it; otherwise it is sent as it is and logged once per route, so that
// a contract that lags behind its code never takes a working route down.
import type { FastifyBaseLogger, FastifySerializerCompiler } from 'fastify';
import type { z } from 'zod';

export const STRICT_ANSWERS_ENV = 'KBCHAT_STRICT_ANSWERS';

/** Where an answer breaks its schema: the first issue's path and message. */
export function answerMismatch(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const at = issue.path.length ? issue.path.map(String).join('.') : '(answer)';
  return `${at}: ${issue.message}`;
}

/** The path of the first key of `sent` that zod's `parsed` output dropped (it names only what its schema declares). */
export function undeclaredKey(sent: unknown, parsed: unknown, path: string[] = []): string | undefined {
  if (sent === null || typeof sent !== 'object' || parsed === null || typeof parsed !== 'object') return undefined;
  for (const [key, value] of Object.entries(sent)) {
    if (value === undefined) continue; // JSON.stringify leaves it out
    const at = [...path, key];
    if (!(key in parsed)) return at.join('.');
    const inner = undeclaredKey(value, (parsed as Record<string, unknown>)[key], at);
    if (inner) return inner;
  }
  return undefined;
}

export class AnswerContractError extends Error {
  readonly code = 'answer_contract';
  constructor(route: string, mismatch: string) {
    super(`The answer of ${route} does not match its declared schema at ${mismatch}`);
  }
}

export interface AnswerCheckOptions {
  log: FastifyBaseLogger;
  /** Throw (a 500) on a mismatch instead of logging it. */
  strict?: boolean;
}

export function answerSerializerCompiler(opts: AnswerCheckOptions): FastifySerializerCompiler<z.ZodType> {
  const strict = opts.strict ?? process.env[STRICT_ANSWERS_ENV] === '1';
  return ({ schema, method, url, httpStatus }) => {
    const route = `${method} ${url} (${httpStatus})`;
    let logged = false;
    return (data) => {
      const r = schema.safeParse(data);
      // zod drops keys a schema does not name without a word, while the document says no others come:
      // the strict check (tests) names the first such key.
      const extra = strict && r.success ? undeclaredKey(data, r.data) : undefined;
      if (!r.success || extra) {
        const mismatch = r.success ? `${extra}: not in the schema` : answerMismatch(r.error);
        if (strict) throw new AnswerContractError(route, mismatch);
        if (!logged) opts.log.error({ route, mismatch }, 'an answer does not match its declared schema (sent as it is)');
        logged = true;
      }
      return JSON.stringify(data);
    };
  };
}
