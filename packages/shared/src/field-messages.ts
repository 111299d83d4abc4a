// What a refused field needs, said plainly: zod's own messages are written
// for developers ("Too big: expected string to have <=64 characters"); a
// 400 says "must be at most 64 characters long". Messages our schemas write
// themselves (refine, custom) are kept as they are.
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

const KINDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  date: 'a date',
  null: 'null',
};

/** `messages[0].role` style path of a validation issue. */
export function issuePath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

/**
 * The field a refused input names, and what it needs ("Invalid '<field>': …"
 * ends with `need`). An unknown field is named itself; `fallback` names the
 * whole input (an issue with no path).
 */
export function refusedField(issue: Issue, input: unknown, fallback = '(body)'): { field: string; need: string } {
  if (issue.code === 'unrecognized_keys') return { field: issuePath([...issue.path, issue.keys[0]!]), need: 'unknown field' };
  return { field: issuePath(issue.path) || fallback, need: describeIssue(issue, issue.path.length === 0 || valueAt(input, issue.path) !== undefined) };
}

function valueAt(value: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** zod's own (English) messages start so; any other message is the schema's own, and kept. */
const ZOD_DEFAULT = /^(Invalid (input|option|string|number|key|value|discriminator)|Invalid [a-z0-9 ]+$|Too (big|small):|Unrecognized keys?:)/;

/** The issue as the end of "Invalid '<field>': …"; `present`: the field was sent (a missing one "is required"). */
export function describeIssue(issue: Issue, present = true): string {
  if (issue.code === 'invalid_type' && !present) return 'is required';
  if (!ZOD_DEFAULT.test(issue.message)) return issue.message;
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${KINDS[issue.expected] ?? issue.expected}`;
    case 'too_big':
      return limit('most', issue.origin, issue.maximum, issue.inclusive);
    case 'too_small':
      if (Number(issue.minimum) === 1 && issue.inclusive !== false && (issue.origin === 'string' || issue.origin === 'array')) return 'must not be empty';
      return limit('least', issue.origin, issue.minimum, issue.inclusive);
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${show(issue.values[0])}` : `must be one of ${issue.values.map(show).join(', ')}`;
    case 'invalid_format':
      return issue.format === 'regex' ? 'is not in the expected form' : `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return 'unknown field';
    case 'invalid_union':
      return 'is not in any accepted form';
    default:
      return issue.message;
  }
}

function limit(side: 'most' | 'least', origin: string, bound: number | bigint | Date, inclusive = true): string {
  const n = String(bound);
  const cmp = inclusive ? `at ${side}` : side === 'most' ? 'less than' : 'more than';
  switch (origin) {
    case 'string':
      return `must be ${cmp} ${n} characters long`;
    case 'array':
    case 'set':
      return `must have ${cmp} ${n} items`;
    case 'file':
      return `must be ${cmp} ${n} bytes`;
    default:
      return `must be ${cmp} ${n}`;
  }
}

function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : String(v);
}
