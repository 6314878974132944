/** Values and tool-call arguments built from a JSON Schema. */
import { asArray, isObject, type JsonObject } from './json-narrowing.js';

// A deterministic JSON value that conforms to a JSON Schema: what the simulated model "writes" as a
// tool call's arguments (argsFromSchema) and as a structured answer (`response_format` json_schema,
// Gemini `responseJsonSchema` / `responseSchema`, modelmux's Anthropic JSON mode; structured-output.ts).
//
// Covered: `$ref` into `$defs` / `definitions` of the same schema, `allOf` (merged), `anyOf` /
// `oneOf` (the first non-null branch), `const`, `enum` (first value), type lists (`["string","null"]`:
// the first non-null), Gemini's upper-case type names, objects (the required properties, or every
// property when `all` is set), arrays (`minItems` copies of one item, at least one), strings (`format`
// email / date-time / date / time / uri / uuid, `minLength`, `maxLength`), numbers and integers within
// `minimum` / `maximum` / `exclusiveMinimum` / `exclusiveMaximum` (`multipleOf` respected for
// integers), booleans, null.
const MAX_DEPTH = 8;

export interface SchemaValueOptions {
  /** Every property of an object, not only the required ones (structured answers fill them all). */
  all?: boolean;
  /** The text used for a plain string (default "Paris"). */
  text?: string;
}

/** A value for `schema` (null for an unusable schema). */
export function valueFromSchema(schema: unknown, opts: SchemaValueOptions = {}): unknown {
  return valueFor(schema, isObject(schema) ? schema : {}, 0, opts);
}

function resolveRef(ref: string, root: JsonObject): unknown {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (m === null) return ref === '#' ? root : undefined;
  const defs = root[m[1]!];
  return isObject(defs) ? defs[decodeURIComponent(m[2]!.replace(/~1/g, '/').replace(/~0/g, '~'))] : undefined;
}

function schemaType(schema: JsonObject): string | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return type.toLowerCase();
  const first = asArray(type).find((t) => typeof t === 'string' && t.toLowerCase() !== 'null');
  if (typeof first === 'string') return first.toLowerCase();
  if (isObject(schema['properties'])) return 'object';
  if (schema['items'] !== undefined) return 'array';
  return undefined;
}

function valueFor(schema: unknown, root: JsonObject, depth: number, opts: SchemaValueOptions): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return null;
  if (typeof schema['$ref'] === 'string') return valueFor(resolveRef(schema['$ref'], root), root, depth + 1, opts);
  if ('const' in schema) return schema['const'];
  const enumValues = asArray(schema['enum']).filter((v) => v !== null);
  if (enumValues.length > 0) return enumValues[0];
  const allOf = asArray(schema['allOf']).filter(isObject);
  if (allOf.length > 0) return mergeAll(schema, allOf, root, depth, opts);
  const alternatives = asArray(schema['anyOf'] ?? schema['oneOf']).filter(isObject);
  if (alternatives.length > 0) {
    const usable = alternatives.find((a) => schemaType(a) !== 'null' && !('type' in a && a['type'] === 'null')) ?? alternatives[0];
    return valueFor(usable, root, depth + 1, opts);
  }
  switch (schemaType(schema)) {
    case 'string':
      return stringFor(schema, opts);
    case 'number':
      return numberFor(schema, false);
    case 'integer':
      return numberFor(schema, true);
    case 'boolean':
      return true;
    case 'array': {
      const min = typeof schema['minItems'] === 'number' ? schema['minItems'] : 1;
      const item = valueFor(schema['items'], root, depth + 1, opts);
      return Array.from({ length: Math.max(1, min) }, () => item);
    }
    case 'object':
      return objectFor(schema, root, depth, opts);
    case 'null':
      return null;
    default:
      return null;
  }
}

function objectFor(schema: JsonObject, root: JsonObject, depth: number, opts: SchemaValueOptions): JsonObject {
  const out: JsonObject = {};
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const names = opts.all === true ? Object.keys(properties) : asArray(schema['required']).filter((n): n is string => typeof n === 'string');
  for (const name of names) out[name] = valueFor(properties[name], root, depth + 1, opts);
  return out;
}

function mergeAll(schema: JsonObject, parts: JsonObject[], root: JsonObject, depth: number, opts: SchemaValueOptions): unknown {
  const values = [schema, ...parts].map((p) => {
    const { allOf: _nested, ...rest } = p;
    return Object.keys(rest).length > 0 ? valueFor(rest, root, depth + 1, opts) : undefined;
  });
  const objects = values.filter(isObject);
  if (objects.length > 0) return Object.assign({}, ...objects);
  return values.find((v) => v !== undefined && v !== null) ?? null;
}

function stringFor(schema: JsonObject, opts: SchemaValueOptions): string {
  let s: string;
  switch (schema['format']) {
    case 'email':
      s = 'user@example.com';
      break;
    case 'date-time':
      s = '2026-01-01T00:00:00Z';
      break;
    case 'date':
      s = '2026-01-01';
      break;
    case 'time':
      s = '00:00:00';
      break;
    case 'uri':
    case 'url':
      s = 'https://example.com';
      break;
    case 'uuid':
      s = '00000000-0000-4000-8000-000000000000';
      break;
    default:
      s = opts.text ?? 'Paris';
  }
  const min = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
  const max = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : Number.POSITIVE_INFINITY;
  if (s.length < min) s = s.padEnd(min, 'x');
  if (s.length > max) s = s.slice(0, max);
  return s;
}

function numberFor(schema: JsonObject, integer: boolean): number {
  const step = integer ? Math.max(1, typeof schema['multipleOf'] === 'number' ? schema['multipleOf'] : 1) : 1;
  let lo = typeof schema['minimum'] === 'number' ? schema['minimum'] : Number.NEGATIVE_INFINITY;
  if (typeof schema['exclusiveMinimum'] === 'number') lo = Math.max(lo, schema['exclusiveMinimum'] + (integer ? 1 : 0.5));
  let hi = typeof schema['maximum'] === 'number' ? schema['maximum'] : Number.POSITIVE_INFINITY;
  if (typeof schema['exclusiveMaximum'] === 'number') hi = Math.min(hi, schema['exclusiveMaximum'] - (integer ? 1 : 0.5));
  let v = 1;
  if (v < lo) v = lo;
  if (v > hi) v = Number.isFinite(lo) ? lo : hi;
  if (integer) {
    v = Math.ceil(v / step) * step;
    if (v > hi) v = Math.floor(hi / step) * step;
  }
  return v;
}

// Builds deterministic tool-call arguments from a JSON Schema, so a simulated tool call is always
// valid against the declared parameters: required strings => "Paris" (or the first enum value),
// numbers/integers => 1 (within the schema's bounds), booleans => true, arrays => one element,
// objects => recurse. Optional properties are left out. Gemini's upper-case type names ("STRING")
// are accepted. The value itself comes from schema-value.ts.
/** Arguments object for a function whose parameters are described by `schema` (any JSON Schema). */
export function argsFromSchema(schema: unknown): JsonObject {
  const value = valueFromSchema(schema);
  return isObject(value) ? value : {};
}
