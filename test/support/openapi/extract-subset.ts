/**
 * Cuts the part of OpenAI's published OpenAPI description that modelmux's wire tests use out of the
 * full file, so the repository vendors ~0.5 MB instead of 3.4 MB.
 *
 *   npx tsx test/support/openapi/extract-subset.ts <openapi.json from github.com/openai/openai-openapi> <commit> <date>
 *
 * Kept: the operations modelmux serves (with their `x-oaiMeta` examples) and every component schema
 * they reach, unchanged. Writes test/fixtures/openai/openapi/openapi.subset.json; the README beside
 * it records the source commit.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The operations modelmux serves: path → methods. */
const OPERATIONS: Record<string, string[]> = {
  '/chat/completions': ['post'],
  '/responses': ['post'],
  '/responses/{response_id}': ['get', 'delete'],
  '/responses/{response_id}/input_items': ['get'],
  '/embeddings': ['post'],
  '/images/generations': ['post'],
  '/models': ['get'],
  '/models/{model}': ['get'],
};

/** Schemas the tests name directly besides those the operations reach (error bodies have no operation). */
const EXTRA_ROOTS = ['ErrorResponse', 'Error', 'ResponseErrorEvent'];

function refsIn(node: Json, out: Set<string>, schemas: Record<string, Json>): void {
  if (Array.isArray(node)) {
    for (const v of node) refsIn(v, out, schemas);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const ref = node['$ref'];
  if (typeof ref === 'string') {
    const m = /^#\/components\/(schemas|responses)\/(.+)$/.exec(ref);
    if (m?.[1] === 'schemas' && m[2] !== undefined && !out.has(m[2])) {
      out.add(m[2]);
      refsIn(schemas[m[2]] ?? null, out, schemas);
    }
  }
  for (const v of Object.values(node)) refsIn(v, out, schemas);
}

function main(): void {
  const [file, commit, date] = process.argv.slice(2);
  if (file === undefined || commit === undefined || date === undefined) throw new Error('usage: extract-subset.ts <openapi.json> <commit> <date>');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { [k: string]: Json } & {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Record<string, Json>; responses?: Record<string, Json> };
  };
  const paths: Record<string, Record<string, Json>> = {};
  for (const [path, methods] of Object.entries(OPERATIONS)) {
    const item = doc.paths[path];
    if (item === undefined) throw new Error(`the description has no ${path}`);
    paths[path] = Object.fromEntries(methods.map((m) => [m, item[m] ?? null]));
  }
  const names = new Set<string>();
  for (const root of EXTRA_ROOTS) {
    names.add(root);
    refsIn(doc.components.schemas[root] ?? null, names, doc.components.schemas);
  }
  refsIn(paths as unknown as Json, names, doc.components.schemas);
  const schemas = Object.fromEntries([...names].sort().map((n) => [n, doc.components.schemas[n] ?? null]));
  const subset = {
    openapi: doc['openapi'],
    info: doc['info'],
    'x-modelmux-source': { repository: 'https://github.com/openai/openai-openapi', file: 'openapi.json', commit, date },
    paths,
    components: { schemas },
  };
  const out = join(import.meta.dirname, '../../fixtures/openai/openapi/openapi.subset.json');
  writeFileSync(out, JSON.stringify(subset, null, 1) + '\n');
  console.log(`${Object.keys(schemas).length} schemas → ${out}`);
}

main();
