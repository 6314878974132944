/**
 * Validates the local Stripe stand-in's objects (and the events tests sign) against the schemas of
 * Stripe's published OpenAPI description vendored under test/fixtures/stripe/openapi/ (its README says
 * from where), with Ajv's JSON Schema 2020-12 validator; OpenAPI 3.0's `nullable` is read as "or null"
 * (validator.ts's conversion).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { toJsonSchema, type Json } from './validator';

const SUBSET_FILE = join(import.meta.dirname, '../../fixtures/stripe/openapi/stripe.subset.json');
const DOC_ID = 'https://modelmux.test/stripe-openapi.json';

let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

/** The validator of component schema `name` (e.g. `checkout.session`). */
export function stripeSchema(name: string): ValidateFunction {
  let fn = compiled.get(name);
  if (fn === undefined) {
    if (ajv === undefined) {
      ajv = new Ajv2020({ strict: false, allErrors: true, formats: { 'unix-time': true } });
      const doc = JSON.parse(readFileSync(SUBSET_FILE, 'utf8')) as { components: Json };
      ajv.addSchema({ $id: DOC_ID, components: toJsonSchema(doc.components) } as Record<string, Json>);
    }
    fn = ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
    compiled.set(name, fn);
  }
  return fn;
}

/** Asserts `value` is a valid `name` per Stripe's description (the errors are the failure message). */
export function expectStripeSchema(name: string, value: unknown): void {
  const validate = stripeSchema(name);
  const ok = validate(JSON.parse(JSON.stringify(value)));
  expect(ok ? [] : validate.errors?.map((e) => `${name}${e.instancePath} ${e.message}`)).toEqual([]);
}
