/**
 * Builds deterministic tool-call arguments from a JSON Schema, so a simulated tool call is always
 * valid against the declared parameters: required strings => "Paris" (or the first enum value),
 * numbers/integers => 1, booleans => true, arrays => one element, objects => recurse.
 * Optional properties are left out. Gemini's upper-case type names ("STRING") are accepted.
 */
import { asArray, isObject, type JsonObject } from './json-narrowing.js';

const MAX_DEPTH = 6;

/** Arguments object for a function whose parameters are described by `schema` (any JSON Schema). */
export function argsFromSchema(schema: unknown): JsonObject {
  const value = valueFor(schema, 0);
  return isObject(value) ? value : {};
}

function schemaType(schema: JsonObject): string | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return type.toLowerCase();
  // `["string","null"]`: the first non-null alternative is the real type.
  const first = asArray(type).find((t) => typeof t === 'string' && t.toLowerCase() !== 'null');
  if (typeof first === 'string') return first.toLowerCase();
  if (isObject(schema['properties'])) return 'object';
  return undefined;
}

function valueFor(schema: unknown, depth: number): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return null;
  const alternatives = asArray(schema['anyOf'] ?? schema['oneOf']);
  if (alternatives.length > 0) return valueFor(alternatives[0], depth + 1);
  const enumValues = asArray(schema['enum']);
  if (enumValues.length > 0) return enumValues[0];
  switch (schemaType(schema)) {
    case 'string':
      return 'Paris';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [valueFor(schema['items'], depth + 1)];
    case 'object': {
      const out: JsonObject = {};
      const properties = isObject(schema['properties']) ? schema['properties'] : {};
      for (const name of asArray(schema['required'])) {
        if (typeof name === 'string') out[name] = valueFor(properties[name], depth + 1);
      }
      return out;
    }
    default:
      return null;
  }
}
