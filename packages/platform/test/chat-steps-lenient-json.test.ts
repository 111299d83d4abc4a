// The lenient reader of model answers: the first object in the text, in the
// JavaScript-ish and Python-ish forms models write.
import { describe, expect, it } from 'vitest';
import { parseFirstJsonObject } from '../src/chat/steps/index.js';

describe('parseFirstJsonObject', () => {
  it('reads strict JSON and JSON inside prose or a code fence', () => {
    expect(parseFirstJsonObject('{"type": "billing"}')).toEqual({ type: 'billing' });
    expect(parseFirstJsonObject('Sure! The answer is {"type": "billing"}. Hope that helps.')).toEqual({ type: 'billing' });
    expect(parseFirstJsonObject('```json\n{\n  "a": 1,\n  "b": [1, 2, {"c": null}]\n}\n```')).toEqual({ a: 1, b: [1, 2, { c: null }] });
  });

  it('accepts single quotes, unquoted keys, trailing commas and comments', () => {
    expect(parseFirstJsonObject("{'type': 'billing',}")).toEqual({ type: 'billing' });
    expect(parseFirstJsonObject('{type: "x", n: -1.5e2, list: [1, 2,], }')).toEqual({ type: 'x', n: -150, list: [1, 2] });
    expect(parseFirstJsonObject('{\n  // the category\n  "type": "a", /* why */ "ok": true\n}')).toEqual({ type: 'a', ok: true });
    expect(parseFirstJsonObject("{'say': 'it\\'s \"quoted\"'}")).toEqual({ say: 'it\'s "quoted"' });
  });

  it('accepts Python literals, bare-word values and raw line breaks in strings', () => {
    expect(parseFirstJsonObject("{'ok': True, 'no': False, 'none': None}")).toEqual({ ok: true, no: false, none: null });
    expect(parseFirstJsonObject('{type: billing}')).toEqual({ type: 'billing' });
    expect(parseFirstJsonObject('{"text": "line one\nline two"}')).toEqual({ text: 'line one\nline two' });
  });

  it('handles braces inside strings and nested objects', () => {
    expect(parseFirstJsonObject('{"a": "}{", "b": {"c": "{"}} trailing }')).toEqual({ a: '}{', b: { c: '{' } });
    expect(parseFirstJsonObject("{'a': '// not a comment', 'b': '/* nor this */'}")).toEqual({ a: '// not a comment', b: '/* nor this */' });
  });

  it('skips braces that are not an object and finds the next one', () => {
    expect(parseFirstJsonObject('Use {type} as the key: {"type": "b"}')).toEqual({ type: 'b' });
    expect(parseFirstJsonObject('{"type": <category id>} then {"type": "c"}')).toEqual({ type: 'c' });
    expect(parseFirstJsonObject('{ unclosed {"type": "d"}')).toEqual({ type: 'd' });
  });

  it('returns undefined when there is no object', () => {
    expect(parseFirstJsonObject('billing')).toBeUndefined();
    expect(parseFirstJsonObject('[1, 2, 3]')).toBeUndefined();
    expect(parseFirstJsonObject('{"a": 1')).toBeUndefined();
    expect(parseFirstJsonObject('{not json at all}')).toBeUndefined();
    expect(parseFirstJsonObject('')).toBeUndefined();
  });
});
