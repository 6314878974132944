/**
 * A deterministic JSON value conforming to a JSON Schema: what the simulated model writes as tool-call
 * arguments and as a structured answer. Covered: `$ref` into `$defs` / `definitions`, `allOf` (merged),
 * `anyOf` / `oneOf` (the first non-null branch), `const`, `enum` (first value), type lists (the first
 * non-null), Gemini's upper-case type names, objects (the required properties, or all with `all`),
 * arrays (`minItems` copies of one item, at least one), strings (`format`, `minLength`, `maxLength`),
 * numbers and integers within the bounds (`multipleOf` for integers), booleans, null.
 */
import { asArray, isObject, type JsonObject } from './json-narrowing.js';

const MAX_DEPTH = 8;

export interface SchemaValueOptions {
  /** Every property of an object, not only the required ones (structured answers fill them all). */
  all?: boolean;
  /** The text used for a plain string (default "Paris"). */
  text?: string;
  /** A value for an object's property, chosen by its name (undefined: built from its schema). */
  property?: (name: string, schema: JsonObject) => unknown;
}

const FORMATS = new Map(
  Object.entries({
    email: 'user@example.com',
    'date-time': '2026-01-01T00:00:00Z',
    date: '2026-01-01',
    time: '00:00:00',
    uri: 'https://example.com',
    url: 'https://example.com',
    uuid: '00000000-0000-4000-8000-000000000000',
  }),
);

/** A value for `schema` (null for an unusable schema). */
export function valueFromSchema(schema: unknown, opts: SchemaValueOptions = {}): unknown {
  return valueFor(schema, isObject(schema) ? schema : {}, 0, opts);
}

/** Arguments of a tool call: the required properties of `schema`, or `{}`. */
export function argsFromSchema(schema: unknown): JsonObject {
  const value = valueFromSchema(schema);
  return isObject(value) ? value : {};
}

/** A structured answer's text: a value with every property of `schema`, or `{"reply": …}` without one. */
export function structuredAnswer(schema: unknown, plainReply: string): string {
  return JSON.stringify(isObject(schema) ? valueFromSchema(schema, { all: true }) : { reply: plainReply });
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
  return schema['items'] !== undefined ? 'array' : undefined;
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
    case 'string': {
      const s = (FORMATS.get(String(schema['format'])) ?? opts.text ?? 'Paris').padEnd(num(schema['minLength']) ?? 0, 'x');
      return s.slice(0, num(schema['maxLength']) ?? Infinity);
    }
    case 'number':
    case 'integer':
      return numberFor(schema, schemaType(schema) === 'integer');
    case 'boolean':
      return true;
    case 'array': {
      const item = valueFor(schema['items'], root, depth + 1, opts);
      return Array.from({ length: Math.max(1, num(schema['minItems']) ?? 1) }, () => item);
    }
    case 'object': {
      const properties = isObject(schema['properties']) ? schema['properties'] : {};
      const names = opts.all === true ? Object.keys(properties) : asArray(schema['required']).filter((n): n is string => typeof n === 'string');
      return Object.fromEntries(names.map((name) => [name, propertyValue(name, properties[name], root, depth, opts)]));
    }
    default:
      return null;
  }
}

function propertyValue(name: string, schema: unknown, root: JsonObject, depth: number, opts: SchemaValueOptions): unknown {
  const chosen = isObject(schema) ? opts.property?.(name, schema) : undefined;
  return chosen === undefined ? valueFor(schema, root, depth + 1, opts) : chosen;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

function mergeAll(schema: JsonObject, parts: JsonObject[], root: JsonObject, depth: number, opts: SchemaValueOptions): unknown {
  const values = [schema, ...parts].map((p) => {
    const { allOf: _nested, ...rest } = p;
    return Object.keys(rest).length > 0 ? valueFor(rest, root, depth + 1, opts) : undefined;
  });
  const objects = values.filter(isObject);
  if (objects.length > 0) return Object.assign({}, ...objects);
  return values.find((v) => v !== undefined && v !== null) ?? null;
}

function numberFor(schema: JsonObject, integer: boolean): number {
  const step = integer ? Math.max(1, num(schema['multipleOf']) ?? 1) : 1;
  const exMin = num(schema['exclusiveMinimum']);
  const exMax = num(schema['exclusiveMaximum']);
  const lo = Math.max(num(schema['minimum']) ?? -Infinity, exMin === undefined ? -Infinity : exMin + (integer ? 1 : 0.5));
  const hi = Math.min(num(schema['maximum']) ?? Infinity, exMax === undefined ? Infinity : exMax - (integer ? 1 : 0.5));
  let v = 1;
  if (v < lo) v = lo;
  if (v > hi) v = Number.isFinite(lo) ? lo : hi;
  if (integer) {
    v = Math.ceil(v / step) * step;
    if (v > hi) v = Math.floor(hi / step) * step;
  }
  return v;
}
