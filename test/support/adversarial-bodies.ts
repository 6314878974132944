/**
 * Adversarial request bodies of about 1 MB, one per shape a hostile tenant can send: a long
 * array, deep nesting, an object with many keys, one long string, many messages. Each shape is built for
 * every route that parses a JSON body (chat, responses, embeddings, /v1/keys, /v1/byok), so the bench
 * can time their validation and the tests can send them through the real handlers.
 */

/** Target size of each body, bytes. */
export const ADVERSARIAL_BYTES = 1_000_000;

/** The shapes. */
export const SHAPES = ['long array', 'deep nesting', 'many keys', 'long string', 'many messages'] as const;
export type Shape = (typeof SHAPES)[number];

/** The routes that parse a JSON body. */
export const BODY_ROUTES = ['chat', 'responses', 'embeddings', 'keys', 'byok'] as const;
export type BodyRoute = (typeof BODY_ROUTES)[number];

/** `count` copies of `unit` joined by commas, enough to fill `bytes`. */
function repeatList(unit: string, bytes: number): string {
  const n = Math.max(1, Math.floor(bytes / (unit.length + 1)));
  return Array.from({ length: n }, () => unit).join(',');
}

/** The adversarial value of `shape`, about `bytes` long, as JSON text. */
function value(shape: Shape, bytes: number): string {
  switch (shape) {
    case 'long array':
      return `[${repeatList('1', bytes)}]`;
    case 'deep nesting': {
      const depth = Math.floor(bytes / 2);
      return '['.repeat(depth) + ']'.repeat(depth);
    }
    case 'many keys': {
      const n = Math.floor(bytes / 12);
      return `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}`;
    }
    case 'long string':
      return JSON.stringify('a'.repeat(bytes));
    case 'many messages':
      return `[${repeatList('{"role":"user","content":"hi"}', bytes)}]`;
  }
}

/**
 * A body of about {@link ADVERSARIAL_BYTES} for `route` carrying `shape` where that route's schema
 * takes an open value (a tool's JSON-schema parameters, the input list, a name), so the body is
 * syntactically valid and reaches every check.
 */
export function adversarialBody(route: BodyRoute, shape: Shape, bytes = ADVERSARIAL_BYTES): string {
  const v = value(shape, bytes);
  const messages = shape === 'many messages' ? v : '[{"role":"user","content":"hi"}]';
  const open = shape === 'many messages' ? '{}' : v;
  switch (route) {
    case 'chat':
      return `{"model":"gpt-4o","messages":${messages},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"enum":${open}}}}}}]}`;
    case 'responses':
      return `{"model":"gpt-4o","input":${messages},"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"x":{"enum":${open}}}}}]}`;
    case 'embeddings':
      return `{"model":"text-embedding-3-small","input":${shape === 'long string' ? v : shape === 'many messages' ? `[${repeatList('"hi"', bytes)}]` : v}}`;
    case 'keys':
      return `{"name":${shape === 'long string' ? v : '"k"'},"limit":${shape === 'long string' ? 'null' : v}}`;
    case 'byok':
      return `{"key":${shape === 'long string' ? v : '"sk-x"'},"allow_fallback":${shape === 'long string' ? 'true' : v}}`;
  }
}
