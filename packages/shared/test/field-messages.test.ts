// A refused field says plainly what it needs, not zod's developer wording;
// a schema's own message is kept.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { refusedField } from '../src/field-messages.js';

function refuse(schema: z.ZodType, input: unknown): string {
  const r = schema.safeParse(input);
  if (r.success) throw new Error('accepted');
  const { field, need } = refusedField(r.error.issues[0]!, input);
  return `Invalid '${field}': ${need}`;
}

describe('refused fields', () => {
  const schema = z.strictObject({
    id: z.string().min(1).max(64),
    name: z.string().min(3, 'must name the thing in 3 letters or more').optional(),
    count: z.number().int().min(0).max(500).optional(),
    ratio: z.number().lt(1).optional(),
    tags: z.array(z.string()).max(2).optional(),
    mode: z.enum(['fast', 'slow']).optional(),
    kind: z.literal('share').optional(),
    email: z.email().optional(),
    nested: z.object({ list: z.array(z.object({ role: z.string() })) }).optional(),
  });

  it('says what a field needs in plain words, naming it', () => {
    expect(refuse(schema, {})).toBe("Invalid 'id': is required");
    expect(refuse(schema, { id: 7 })).toBe("Invalid 'id': must be text");
    expect(refuse(schema, { id: '' })).toBe("Invalid 'id': must not be empty");
    expect(refuse(schema, { id: 'x'.repeat(80) })).toBe("Invalid 'id': must be at most 64 characters long");
    expect(refuse(schema, { id: 'a', count: 1.5 })).toBe("Invalid 'count': must be a whole number");
    expect(refuse(schema, { id: 'a', count: 501 })).toBe("Invalid 'count': must be at most 500");
    expect(refuse(schema, { id: 'a', count: -1 })).toBe("Invalid 'count': must be at least 0");
    expect(refuse(schema, { id: 'a', ratio: 1 })).toBe("Invalid 'ratio': must be less than 1");
    expect(refuse(schema, { id: 'a', tags: ['a', 'b', 'c'] })).toBe("Invalid 'tags': must have at most 2 items");
    expect(refuse(schema, { id: 'a', mode: 'medium' })).toBe('Invalid \'mode\': must be one of "fast", "slow"');
    expect(refuse(schema, { id: 'a', kind: 'link' })).toBe('Invalid \'kind\': must be "share"');
    expect(refuse(schema, { id: 'a', email: 'nope' })).toBe("Invalid 'email': must be a valid email");
    expect(refuse(schema, { id: 'a', color: 'red' })).toBe("Invalid 'color': unknown field");
    expect(refuse(schema, { id: 'a', nested: { list: [{}] } })).toBe("Invalid 'nested.list[0].role': is required");
    expect(refuse(schema, { id: 'a', nested: { list: [{ role: null }] } })).toBe("Invalid 'nested.list[0].role': must be text");
  });

  it("keeps a schema's own message", () => {
    expect(refuse(schema, { id: 'a', name: 'ab' })).toBe("Invalid 'name': must name the thing in 3 letters or more");
    expect(refuse(z.object({ at: z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'an ISO date or epoch milliseconds') }), { at: 'soon' })).toBe(
      "Invalid 'at': an ISO date or epoch milliseconds",
    );
  });

  it('names the whole input when the issue has no path', () => {
    const r = z.array(z.string()).safeParse('text');
    expect(r.success).toBe(false);
    expect(refusedField(r.error!.issues[0]!, 'text')).toEqual({ field: '(body)', need: 'must be a list' });
  });
});
