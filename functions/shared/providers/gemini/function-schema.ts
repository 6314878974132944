import type { JsonObject } from './wire-request';

/**
 * OpenAI tool `parameters` (JSON Schema) → Gemini `FunctionDeclaration.parameters`, which takes only
 * an OpenAPI 3.0 subset (Gemini API, providers.md §3.2; the fields of the `Schema` type in the
 * official `@google/genai` SDK). Keys outside that subset make Gemini answer 400, so:
 *
 * - kept: type, format, title, description, nullable, enum, properties, required, items, anyOf,
 *   minimum, maximum, minItems, maxItems, minLength, maxLength, minProperties, maxProperties,
 *   pattern, default, example, propertyOrdering;
 * - rewritten: `type: ["string","null"]` and `anyOf: [X, {type:"null"}]` → X + `nullable: true`;
 *   `oneOf` → `anyOf`; `const: v` → `enum: ["v"]`; enum values → strings (Gemini's enum is
 *   `string[]`); `$ref` into the schema's own `$defs`/`definitions` and a one-element `allOf` are
 *   inlined (cycles stop at {@link MAX_DEPTH} as `{type:"object"}`);
 * - dropped: everything else, notably `additionalProperties`, `$schema`, `$id`, `$defs`, `strict`,
 *   `exclusiveMinimum`/`exclusiveMaximum`, `not`, `if`/`then`/`else`, and string `format`s other
 *   than `enum`/`date-time` (observed 400: "only 'enum' and 'date-time' are supported for STRING type").
 *
 * The model therefore sees fewer constraints than the client declared; arguments are still
 * returned as the client's tool expects, but e.g. `additionalProperties: false` is not enforced.
 */

/** Deepest nesting (and `$ref` expansion) converted; beyond it a schema becomes `{type:"object"}`. */
const MAX_DEPTH = 24;

/** Keys copied as they are (after the rewrites above). */
const COPIED = [
  'title',
  'description',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
  'pattern',
  'default',
  'example',
  'propertyOrdering',
] as const;

const STRING_FORMATS = new Set(['enum', 'date-time']);

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Converts a tool's `parameters`.
 * @returns the Gemini schema, or undefined when the function takes no parameters (an object schema
 *   without properties): Gemini wants `parameters` left unset then, and rejects an OBJECT with empty
 *   `properties`.
 */
export function toGeminiParameters(parameters: JsonObject | undefined): JsonObject | undefined {
  if (parameters === undefined) return undefined;
  const defs: JsonObject = { ...asObject(parameters.definitions), ...asObject(parameters.$defs) };
  const out = convert(parameters, defs, 0);
  const isObjectType = typeof out.type === 'string' && out.type.toLowerCase() === 'object';
  if (isObjectType && out.properties === undefined) return undefined;
  return out;
}

function asObject(v: unknown): JsonObject {
  return isObject(v) ? v : {};
}

function convert(node: unknown, defs: JsonObject, depth: number): JsonObject {
  if (!isObject(node)) return {};
  if (depth > MAX_DEPTH) return { type: 'object' };

  const { $ref, allOf, ...rest } = node;
  if (typeof $ref === 'string') {
    const target = resolveRef($ref, defs);
    // Sibling keys (typically `description`) refine the referenced schema.
    if (target !== undefined) return convert({ ...target, ...rest }, defs, depth + 1);
  }
  if (Array.isArray(allOf) && allOf.length === 1 && isObject(allOf[0])) {
    return convert({ ...allOf[0], ...rest }, defs, depth + 1);
  }

  const out: JsonObject = {};
  applyType(out, node.type);
  applyAlternatives(out, node.anyOf ?? node.oneOf, defs, depth);

  if (isObject(node.properties)) {
    const props: JsonObject = {};
    for (const [name, sub] of Object.entries(node.properties)) props[name] = convert(sub, defs, depth + 1);
    if (Object.keys(props).length > 0) out.properties = props;
  }
  const items = Array.isArray(node.items) ? node.items[0] : node.items;
  if (items !== undefined) out.items = convert(items, defs, depth + 1);

  for (const key of COPIED) if (node[key] !== undefined) out[key] = node[key];
  if (typeof node.nullable === 'boolean') out.nullable = node.nullable || out.nullable === true;

  const values = Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : undefined;
  if (values !== undefined) {
    if (values.includes(null)) out.nullable = true;
    out.enum = values.filter((v) => v !== null).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  }

  if (typeof node.format === 'string') {
    const isString = typeof out.type === 'string' && out.type.toLowerCase() === 'string';
    if (!isString || STRING_FORMATS.has(node.format)) out.format = node.format;
  }

  if (Array.isArray(node.required)) {
    const props = asObject(out.properties);
    const required = node.required.filter((r): r is string => typeof r === 'string' && r in props);
    if (required.length > 0) out.required = required;
  }
  return out;
}

/** `#/$defs/Name` or `#/definitions/Name`; anything else (remote refs) is left unresolved. */
function resolveRef(ref: string, defs: JsonObject): JsonObject | undefined {
  const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  if (m?.[1] === undefined) return undefined;
  const target = defs[decodeURIComponent(m[1]).replace(/~1/g, '/').replace(/~0/g, '~')];
  return isObject(target) ? target : undefined;
}

/** JSON Schema's type union: a `"null"` member becomes `nullable`; several others become `anyOf`. */
function applyType(out: JsonObject, type: unknown): void {
  const types = (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === 'string');
  const nonNull = types.filter((t) => t !== 'null');
  if (nonNull.length < types.length) out.nullable = true;
  if (nonNull.length === 1) out.type = nonNull[0];
  else if (nonNull.length > 1) out.anyOf = nonNull.map((t) => ({ type: t }));
}

/** `anyOf`/`oneOf`: null branches become `nullable`; a single remaining branch is inlined. */
function applyAlternatives(out: JsonObject, alternatives: unknown, defs: JsonObject, depth: number): void {
  if (!Array.isArray(alternatives)) return;
  const nonNull = alternatives.filter((a) => !(isObject(a) && a.type === 'null'));
  if (nonNull.length < alternatives.length) out.nullable = true;
  const converted = nonNull.map((a) => convert(a, defs, depth + 1));
  if (converted.length === 1 && converted[0] !== undefined) Object.assign(out, converted[0], out.nullable === true ? { nullable: true } : {});
  else if (converted.length > 1) out.anyOf = converted;
}
