// usageOnly: the trailing usage of a large JSON answer, read without parsing the rest.
import { describe, expect, it } from 'vitest';
import { usageOnly } from '../src/relay/json-endpoints.js';

const big = 'x'.repeat(70_000);

describe('usageOnly', () => {
  it('reads a trailing usage object, strings with braces and escapes included', () => {
    const text = JSON.stringify({ object: 'list', data: [{ embedding: big }], model: 'm', usage: { prompt_tokens: 5, total_tokens: 5, note: 'a}"{b' } });
    expect(usageOnly(text)).toEqual({ usage: { prompt_tokens: 5, total_tokens: 5, note: 'a}"{b' } });
  });

  it('gives up (so the caller parses it all) when the answer is small, usage is not last, or the text is cut', () => {
    expect(usageOnly(JSON.stringify({ usage: { prompt_tokens: 1 } }))).toBeUndefined();
    expect(usageOnly(JSON.stringify({ usage: { prompt_tokens: 1 }, data: [big] }))).toBeUndefined();
    const whole = JSON.stringify({ data: [big], usage: { prompt_tokens: 1 } });
    expect(usageOnly(whole.slice(0, -1))).toBeUndefined();
    expect(usageOnly(whole.slice(0, -3) + 'x}}')).toBeUndefined();
    expect(usageOnly(JSON.stringify({ data: [big] }))).toBeUndefined();
  });
});
