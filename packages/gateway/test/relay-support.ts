// Small helpers shared by the relay-*.test.ts files: the official OpenAI
// client pointed at a test gateway, and assertions on the errors it sees.
import OpenAI, { APIError } from 'openai';
import { expect } from 'vitest';
import { ROOT_TOKEN, type TestGateway } from './helpers.js';

/** The official client as a black box: no retries of its own, so every call is one request. */
export function openaiClient(t: TestGateway, apiKey = ROOT_TOKEN): OpenAI {
  return new OpenAI({ apiKey, baseURL: t.baseURL, maxRetries: 0 });
}

/** Awaits a call that must fail and returns the SDK's error (OpenAI's APIError unless another SDK's class is given). */
export async function apiError<E = APIError>(call: Promise<unknown>, errorClass: abstract new (...args: any[]) => E = APIError as never): Promise<E> {
  try {
    await call;
  } catch (err) {
    expect(err).toBeInstanceOf(errorClass);
    return err as E;
  }
  throw new Error('expected the call to fail');
}

/** Every gateway error carries its request id: in X-Request-Id and at the end of the message. */
export function expectRequestId(message: string | undefined, requestId: string | null | undefined): void {
  expect(requestId).toMatch(/^\d{17}[0-9a-f]{12}$/);
  expect(message).toMatch(new RegExp(` \\(request id: ${requestId}\\)$`));
}

/** Reads a stream to its end; an error thrown by the iterator is returned with what came before it. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<{ chunks: T[]; error?: unknown }> {
  const chunks: T[] = [];
  try {
    for await (const c of stream) chunks.push(c);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks };
}

/** A root-owned token (or one of `userId`) with the given limits; returns its key. */
export async function makeToken(
  t: TestGateway,
  input: Parameters<TestGateway['gw']['services']['accounts']['createToken']>[1],
  userId?: number,
): Promise<string> {
  const { accounts, accountsStore } = t.gw.services;
  const owner = userId ?? (await accountsStore.userByName('root'))!.id;
  return (await accounts.createToken(owner, input)).key;
}

/** Requests the simulator saw for `model` (as sent upstream). */
export function simCount(sim: TestGateway['sim'], model: string): number {
  return sim.stats().byModel[model] ?? 0;
}
