import type * as z from 'zod';
import { InvalidRequestError } from './errors';
import { assertRequestBounds } from './request-bounds';

/**
 * Parses a raw request body as JSON and validates it with `schema`.
 *
 * @returns the schema's output (defaults applied).
 * @throws InvalidRequestError (400) when the body is empty, passes a structural bound
 *   (request-bounds.ts), is not JSON, or fails the schema; `param`
 *   names the first offending field in OpenAI's dotted form (`messages[0].role`).
 */
export function parseJsonBody<S extends z.ZodType>(raw: string, schema: S): z.output<S> {
  if (raw.length === 0) throw new InvalidRequestError('The request body is empty; expected a JSON object.');
  assertRequestBounds(raw);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new InvalidRequestError(
      'We could not parse the JSON body of your request. The body must be valid JSON (Content-Type: application/json).',
      { code: 'invalid_json' },
    );
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new InvalidRequestError('The request body must be a JSON object.');
  }
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw new InvalidRequestError('Invalid request body.');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const param = formatPath([...issue.path, key]);
    throw new InvalidRequestError(`Unrecognized request argument supplied: ${param}`, { param, code: 'unknown_parameter' });
  }
  const param = formatPath(issue.path);
  const missing = issue.code === 'invalid_type' && issue.message.includes('received undefined');
  const message = missing
    ? `Missing required parameter: '${param}'.`
    : `Invalid value for '${param || 'body'}': ${issue.message}.`;
  throw new InvalidRequestError(message, { param: param || null, code: missing ? 'missing_required_parameter' : 'invalid_value' });
}

/** `['messages', 0, 'role']` → `messages[0].role`. */
function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}
