/**
 * Cuts the schemas the local Stripe stand-in's answers are checked against out of Stripe's published
 * OpenAPI description (github.com/stripe/openapi, `openapi/spec3.json`), so the repository vendors
 * ~60 KB instead of 4 MB:
 *
 *   npx tsx test/support/openapi/extract-stripe-subset.ts <spec3.json> <commit> <date>
 *
 * Kept, unchanged but for their `description`s (dropped for size): the ROOTS below. A `$ref` to a
 * schema not kept becomes `{}` (any value): the stand-in's nested objects are checked only where a
 * kept schema describes them. Writes test/fixtures/stripe/openapi/stripe.subset.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The objects modelmux reads or the stand-in answers with. */
const ROOTS = [
  'checkout.session',
  'payment_intent',
  'charge',
  'refund',
  'customer',
  'event',
  'dispute',
  'error',
  'api_errors',
  'notification_event_data',
  'payment_pages_checkout_session_automatic_tax',
  'billing_details',
  'address',
];

function prune(node: Json): Json {
  if (Array.isArray(node)) return node.map(prune);
  if (node === null || typeof node !== 'object') return node;
  const ref = node['$ref'];
  if (typeof ref === 'string') {
    const name = ref.replace('#/components/schemas/', '');
    return ROOTS.includes(name) ? { $ref: ref } : {};
  }
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'description' && typeof v === 'string') continue;
    if (k.startsWith('x-')) continue;
    out[k] =
      k === 'properties' && v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, prune(s)]))
        : prune(v);
  }
  return out;
}

function main(): void {
  const [file, commit, date] = process.argv.slice(2);
  if (file === undefined || commit === undefined || date === undefined) throw new Error('usage: extract-stripe-subset.ts <spec3.json> <commit> <date>');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { info: { version: string }; openapi: string; components: { schemas: Record<string, Json> } };
  const schemas = Object.fromEntries(
    ROOTS.map((name) => {
      const schema = doc.components.schemas[name];
      if (schema === undefined) throw new Error(`the description has no ${name}`);
      return [name, prune(schema)];
    }),
  );
  const subset = {
    openapi: doc.openapi,
    info: { version: doc.info.version },
    'x-modelmux-source': { repository: 'https://github.com/stripe/openapi', path: 'openapi/spec3.json', commit, date },
    components: { schemas },
  };
  writeFileSync(join(import.meta.dirname, '../../fixtures/stripe/openapi/stripe.subset.json'), `${JSON.stringify(subset)}\n`);
}

main();
