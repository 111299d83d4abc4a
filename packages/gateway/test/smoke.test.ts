import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers.js';

describe('smoke', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t?.close();
  });
  it('relays a chat completion', async () => {
    const res = await t.api('/v1/chat/completions', { method: 'POST', json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^\d{17}[0-9a-f]{12}$/);
    const body = await res.json();
    expect(body.choices[0].message.content).toMatch(/^Echo: hi/);
  });
});
