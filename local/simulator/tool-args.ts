/**
 * Builds deterministic tool-call arguments from a JSON Schema, so a simulated tool call is always
 * valid against the declared parameters: required strings => "Paris" (or the first enum value),
 * numbers/integers => 1 (within the schema's bounds), booleans => true, arrays => one element,
 * objects => recurse. Optional properties are left out. Gemini's upper-case type names ("STRING")
 * are accepted. The value itself comes from schema-value.ts.
 */
import { isObject, type JsonObject } from './json-narrowing.js';
import { valueFromSchema } from './schema-value.js';

/** Arguments object for a function whose parameters are described by `schema` (any JSON Schema). */
export function argsFromSchema(schema: unknown): JsonObject {
  const value = valueFromSchema(schema);
  return isObject(value) ? value : {};
}
