/**
 * Generates candidate JSON values from a schema of the vendored OpenAI description: values built to
 * conform (every enum value, every `oneOf`/`anyOf` branch, objects with only their required
 * properties and with all of them) and values built to break it (a wrong type, a value outside an
 * enum or a range, a required property left out, an empty array below `minItems`).
 *
 * A candidate's label says how it was made, but never decides the verdict: the test asks the
 * validator (validator.ts) whether OpenAI's description accepts it. Generation is deterministic and
 * depth-limited so the case list is stable.
 */
import { openApiSubset } from './validator';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = { [k: string]: Json };

/** One generated value and how it was made (for test names). */
export interface Candidate {
  label: string;
  value: Json;
}

function isSchema(v: Json | undefined): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Follows `$ref`s into the vendored components. */
export function resolve(schema: Json | undefined): Schema {
  let s: Json | undefined = schema;
  for (let hops = 0; isSchema(s) && typeof s['$ref'] === 'string' && hops < 20; hops++) {
    const name = s['$ref'].replace('#/components/schemas/', '');
    const target = openApiSubset().components.schemas[name];
    // A `$ref` with siblings (a description, `type: object`) means the target.
    s = target as unknown as Json;
  }
  return isSchema(s) ? s : {};
}

/** The branches of a union (`oneOf`/`anyOf`), or the schema itself. */
function branches(s: Schema): Schema[] {
  const list = s['oneOf'] ?? s['anyOf'];
  return Array.isArray(list) ? list.map((b) => resolve(b)) : [s];
}

/** An object schema's properties and required names, merged through `allOf`. */
export function objectShape(schema: Json | undefined): { properties: Record<string, Json>; required: string[] } {
  const s = resolve(schema);
  const properties: Record<string, Json> = { ...(isSchema(s['properties']) ? s['properties'] : {}) };
  const required = Array.isArray(s['required']) ? s['required'].filter((r): r is string => typeof r === 'string') : [];
  for (const part of Array.isArray(s['allOf']) ? s['allOf'] : []) {
    const inner = objectShape(part);
    Object.assign(properties, inner.properties);
    for (const r of inner.required) if (!required.includes(r)) required.push(r);
  }
  return { properties, required };
}

function typeOf(s: Schema): string | undefined {
  const t = s['type'];
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === 'string' && x !== 'null');
  if (isSchema(s['properties']) || Array.isArray(s['allOf'])) return 'object';
  return undefined;
}

/** A string that satisfies `s` (enum, format, length). */
function stringFor(s: Schema): string {
  if (s['format'] === 'uri') return 'https://example.com/image.png';
  const min = typeof s['minLength'] === 'number' ? s['minLength'] : 1;
  return 'x'.repeat(Math.max(1, min));
}

function numberFor(s: Schema, integer: boolean): number {
  const min = typeof s['minimum'] === 'number' ? s['minimum'] : undefined;
  const max = typeof s['maximum'] === 'number' ? s['maximum'] : undefined;
  if (typeof s['default'] === 'number') return s['default'];
  if (min !== undefined && max !== undefined) return integer ? Math.ceil((min + max) / 2) : (min + max) / 2;
  if (min !== undefined) return integer ? Math.ceil(min) + 1 : min + 0.5;
  if (max !== undefined) return integer ? Math.floor(max) - 1 : max - 0.5;
  return 1;
}

/** Values built to conform to `schema` (at most `limit`). */
export function validSamples(schema: Json | undefined, depth = 0, limit = 6): Json[] {
  const s = resolve(schema);
  if (depth > 6) return [];
  if (Array.isArray(s['enum'])) return s['enum'].filter((v) => v !== null).slice(0, limit);
  if ('const' in s) return [s['const'] as Json];
  if (Array.isArray(s['oneOf']) || Array.isArray(s['anyOf'])) {
    const out: Json[] = [];
    for (const b of branches(s)) {
      if (typeOf(b) === 'null') continue;
      out.push(...validSamples(b, depth + 1, limit));
    }
    return out.slice(0, limit);
  }
  switch (typeOf(s)) {
    case 'object':
      return objectSamples(s, depth, limit);
    case 'array': {
      const min = typeof s['minItems'] === 'number' ? s['minItems'] : 1;
      const items = validSamples(s['items'], depth + 1, Math.max(limit, 8));
      if (items.length === 0) return [[]];
      return items.map((item) => Array.from({ length: Math.max(1, min) }, () => item));
    }
    case 'string':
      return [stringFor(s)];
    case 'integer':
      return [numberFor(s, true)];
    case 'number':
      return [numberFor(s, false)];
    case 'boolean':
      return [true, false];
    case 'null':
      return [null];
    default:
      return ['x'];
  }
}

function objectSamples(s: Schema, depth: number, limit: number): Json[] {
  const { properties, required } = objectShape(s);
  const names = Object.keys(properties);
  if (names.length === 0) {
    const extra = s['additionalProperties'];
    return isSchema(extra) && Object.keys(extra).length > 0 ? [{ key: validSamples(extra, depth + 1, 1)[0] ?? 'x' }] : [{}];
  }
  const minimal: Schema = {};
  for (const r of required) {
    const v = validSamples(properties[r], depth + 1, 1)[0];
    if (v !== undefined) minimal[r] = v;
  }
  const full: Schema = { ...minimal };
  for (const n of names) {
    if (n in full) continue;
    const v = validSamples(properties[n], depth + 1, 1)[0];
    if (v !== undefined) full[n] = v;
  }
  const out: Json[] = [minimal];
  if (JSON.stringify(full) !== JSON.stringify(minimal)) out.push(full);
  // Then every other form each property can take (a content string, then each kind of part, …).
  for (const n of names) {
    for (const v of validSamples(properties[n], depth + 1, limit).slice(1)) out.push({ ...minimal, [n]: v });
  }
  return out.slice(0, Math.max(limit, 2));
}

/** Values built to break `schema`, each with how (the validator has the last word). */
export function breakingSamples(schema: Json | undefined, depth = 0): Candidate[] {
  const s = resolve(schema);
  const out: Candidate[] = [];
  const type = typeOf(s);
  out.push(
    type === 'string' || Array.isArray(s['enum'])
      ? { label: 'a number for a string', value: 12345 }
      : { label: 'a string for a non-string', value: 'not-a-valid-value' },
  );
  if (Array.isArray(s['enum'])) out.push({ label: 'a value outside the enum', value: 'not-an-enum-value' });
  if (type === 'integer') out.push({ label: 'a fraction for an integer', value: 1.5 });
  if (type === 'integer' || type === 'number') {
    if (typeof s['minimum'] === 'number') out.push({ label: 'below the minimum', value: s['minimum'] - 1 });
    if (typeof s['maximum'] === 'number') out.push({ label: 'above the maximum', value: s['maximum'] + 1 });
  }
  if (type === 'array') {
    if (typeof s['minItems'] === 'number' && s['minItems'] > 0) out.push({ label: 'an empty array', value: [] });
    if (typeof s['maxItems'] === 'number')
      out.push({ label: 'too many items', value: Array.from({ length: s['maxItems'] + 1 }, () => validSamples(s['items'], depth + 1, 1)[0] ?? 'x') });
    if (depth < 7) for (const m of breakingSamples(s['items'], depth + 1).slice(0, 24)) out.push({ label: `an item with ${m.label}`, value: [m.value] });
  }
  if (type === 'object' && depth < 7) out.push(...objectBreakers(s, depth));
  if ((Array.isArray(s['oneOf']) || Array.isArray(s['anyOf'])) && depth < 7) {
    // Each branch broken in its own ways (a part of a content array with a bad field, …), without
    // repeating the wrong-type candidate every branch starts with.
    for (const b of branches(s)) out.push(...breakingSamples(b, depth + 1).slice(1, 12));
  }
  return out;
}

function objectBreakers(s: Schema, depth: number): Candidate[] {
  const out: Candidate[] = [];
  const { properties, required } = objectShape(s);
  const base = validSamples(s, depth, 2).at(-1);
  if (!isSchema(base)) return out;
  // A property the schema does not name: accepted unless the schema closes the object.
  out.push({ label: 'an unknown property', value: { ...base, unknown_property: 'x' } });
  for (const r of required) {
    const { [r]: _dropped, ...rest } = base;
    out.push({ label: `no ${r}`, value: rest });
  }
  for (const [name, prop] of Object.entries(properties)) {
    for (const m of breakingSamples(prop, depth + 1).slice(0, 3)) out.push({ label: `${name}: ${m.label}`, value: { ...base, [name]: m.value } });
  }
  return out;
}
