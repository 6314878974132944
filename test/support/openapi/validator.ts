/**
 * Validates JSON values against OpenAI's published OpenAPI description (the subset vendored under
 * test/fixtures/openai/openapi/, see its README), with Ajv's JSON Schema 2020-12 validator.
 *
 * The description is OpenAPI 3.1 but still carries a few OpenAPI 3.0 `nullable: true` flags; they are
 * turned into their 2020-12 meaning (the value may also be null) before compiling. `discriminator`
 * and the `x-…` annotations are dropped: they only say which `oneOf` branch to try, which `oneOf`
 * already decides. Of the formats only `uri` is checked (a scheme, then the rest); the others
 * (`unixtime`, `date`, …) describe values OpenAI sends and stay annotations.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const SUBSET_FILE = join(import.meta.dirname, '../../fixtures/openai/openapi/openapi.subset.json');

/** The vendored description, as published (before the conversion below). */
export interface OpenApiSubset {
  info: { version: string };
  'x-modelmux-source': { commit: string; date: string };
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject> };
}

let cachedDoc: OpenApiSubset | undefined;

/** The vendored description, parsed once. */
export function openApiSubset(): OpenApiSubset {
  cachedDoc ??= JSON.parse(readFileSync(SUBSET_FILE, 'utf8')) as OpenApiSubset;
  return cachedDoc;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** OpenAPI 3.0 `nullable: true` → JSON Schema 2020-12; drops `discriminator` and `x-` annotations. */
export function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'discriminator' || k === 'nullable' || k.startsWith('x-')) continue;
    // Property names are data, not keywords: keep every one (a property may be called `nullable`).
    out[k] = k === 'properties' && isObject(v) ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, toJsonSchema(s)])) : toJsonSchema(v);
  }
  if (node['nullable'] !== true) return out;
  if (typeof out['type'] === 'string' && out['$ref'] === undefined && out['oneOf'] === undefined && out['anyOf'] === undefined) {
    const widened: JsonObject = { ...out, type: [out['type'], 'null'] };
    if (Array.isArray(out['enum'])) widened['enum'] = [...out['enum'], null];
    return widened;
  }
  const { description, default: dflt, ...rest } = out;
  const wrapped: JsonObject = { anyOf: [rest, { type: 'null' }] };
  if (description !== undefined) wrapped['description'] = description;
  if (dflt !== undefined) wrapped['default'] = dflt;
  return wrapped;
}

/** `format: uri`, the one format request bodies use that OpenAI checks (an image URL): a scheme, then the rest. */
const URI = /^[a-z][a-z0-9+.-]*:\S/i;

const DOC_ID = 'https://modelmux.test/openai-openapi.json';

let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

function validatorFor(key: string, schema: JsonObject): ValidateFunction {
  let fn = compiled.get(key);
  if (fn === undefined) {
    if (ajv === undefined) {
      ajv = new Ajv2020({ strict: false, allErrors: false, formats: { uri: URI, unixtime: true, date: true, float: true } });
      const doc = openApiSubset();
      ajv.addSchema({ $id: DOC_ID, components: toJsonSchema(doc.components as unknown as Json) } as JsonObject);
    }
    fn = ajv.compile(schema);
    compiled.set(key, fn);
  }
  return fn;
}

function ref(name: string): JsonObject {
  if (openApiSubset().components.schemas[name] === undefined) throw new Error(`the vendored description has no schema ${name}`);
  return { $ref: `${DOC_ID}#/components/schemas/${name}` };
}

/** A readable list of what is wrong (empty when the value is valid). */
function describe(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map(
    (e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword}${e.params && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ''}`,
  );
}

/**
 * Validates `value` against the component schema `name` (e.g. `CreateChatCompletionResponse`).
 * @returns the errors, empty when valid.
 */
export function schemaErrors(name: string, value: unknown): string[] {
  const fn = validatorFor(name, ref(name));
  return fn(value) ? [] : describe(fn.errors);
}

/**
 * Validates `value` against `name` with no property allowed beyond the ones the schema (through its
 * `allOf`s) names at the top level: OpenAI's Chat Completions and Responses APIs refuse an unknown
 * top-level request argument ("Unrecognized request argument supplied", "Unknown parameter"), which
 * the description itself does not say.
 */
export function strictTopLevelErrors(name: string, value: unknown): string[] {
  const fn = validatorFor(`strict:${name}`, { ...ref(name), unevaluatedProperties: false });
  return fn(value) ? [] : describe(fn.errors);
}

/**
 * The `ResponseStreamEvent` branch for an event `type` (e.g. `ResponseTextDeltaEvent` for
 * `response.output_text.delta`), so a wrong event is reported against its own schema instead of
 * against every branch of the union.
 * @throws Error for a type the description does not define.
 */
export function responseEventSchema(type: string): string {
  const union = openApiSubset().components.schemas['ResponseStreamEvent'];
  const refs = ((union?.['anyOf'] ?? union?.['oneOf']) as Array<{ $ref: string }> | undefined) ?? [];
  for (const { $ref } of refs) {
    const name = $ref.split('/').at(-1) ?? '';
    const typeProp = (openApiSubset().components.schemas[name]?.['properties'] as Record<string, { enum?: string[] }> | undefined)?.['type'];
    if (typeProp?.enum?.includes(type) === true) return name;
  }
  throw new Error(`OpenAI's description defines no stream event of type ${type}`);
}
