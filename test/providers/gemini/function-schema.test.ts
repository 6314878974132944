import { describe, expect, it } from 'vitest';
import { toGeminiParameters } from '../../../functions/shared/providers/gemini/function-schema';

/** JSON Schema tool parameters → Gemini's OpenAPI-subset Schema (providers.md §3.2). */

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('Gemini function parameters', () => {
  it('leaves parameters unset when there are none', () => {
    expect(toGeminiParameters(undefined)).toBeUndefined();
    expect(toGeminiParameters({ type: 'object' })).toBeUndefined();
    expect(toGeminiParameters({ type: 'object', properties: {}, additionalProperties: false })).toBeUndefined();
  });

  it('turns nullable unions into nullable, oneOf into anyOf and const into a one-value enum', () => {
    expect(
      toGeminiParameters(
        obj({
          a: { anyOf: [{ type: 'string', maxLength: 5 }, { type: 'null' }] },
          b: { oneOf: [{ type: 'string' }, { type: 'number', exclusiveMinimum: 0 }] },
          c: { const: 'fixed' },
          d: { type: ['string', 'integer'] },
          e: { type: 'string', format: 'uri' },
          f: { type: 'number', format: 'double', minimum: 0, maximum: 1 },
        }),
      ),
    ).toEqual(
      obj({
        a: { type: 'string', maxLength: 5, nullable: true },
        b: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        c: { enum: ['fixed'] },
        d: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        e: { type: 'string' },
        f: { type: 'number', format: 'double', minimum: 0, maximum: 1 },
      }),
    );
  });

  it('inlines $ref and single allOf, stops a cycle at a bounded depth, and keeps array items', () => {
    const out = toGeminiParameters({
      type: 'object',
      properties: {
        tags: { type: 'array', items: { allOf: [{ $ref: '#/definitions/Tag' }] }, minItems: 1 },
        tree: { $ref: '#/$defs/Node' },
      },
      definitions: { Tag: { type: 'string', enum: ['a', 'b'] } },
      $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } },
    });
    expect(out?.properties).toMatchObject({ tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 1 } });
    let node = (out?.properties as Record<string, unknown>).tree as Record<string, unknown>;
    let depth = 0;
    while (node.properties !== undefined) {
      node = (node.properties as Record<string, Record<string, unknown>>).child as Record<string, unknown>;
      depth++;
    }
    expect(node).toEqual({ type: 'object' });
    expect(depth).toBeGreaterThan(3);
    expect(depth).toBeLessThan(30);
  });

  it('keeps only required names that are declared properties', () => {
    expect(toGeminiParameters(obj({ a: { type: 'string' } }, { required: ['a', 'ghost'] }))).toEqual(obj({ a: { type: 'string' } }, { required: ['a'] }));
  });
});
