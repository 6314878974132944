import { safeParse, type core } from '../validation/zod';
import { InvalidRequestError } from '../errors/gateway-errors';
import { assertRequestBounds, assertWithinBudget, validationDeadline, type ValidationDeadline } from './request-bounds';

/**
 * Parses a raw request body as JSON and validates it with `schema`.
 *
 * @param unknownArgument how an unknown argument is worded: Chat Completions says "Unrecognized
 *   request argument supplied: x" (the default), the Responses API "Unknown parameter: 'x'."
 * @returns the schema's output (defaults applied).
 * @param deadline the time budget for the whole check (request-bounds.ts; a fresh one by default).
 * @throws InvalidRequestError (400) when the body is empty, passes a structural bound or the time
 *   budget (request-bounds.ts, code `request_too_complex`), is not JSON, or fails the schema; `param`
 *   names the first offending field in OpenAI's dotted form (`messages[0].role`).
 */
export function parseJsonBody<S extends core.$ZodType>(
  raw: string,
  schema: S,
  unknownArgument: (param: string) => string = unrecognizedArgument,
  deadline: ValidationDeadline = validationDeadline(),
): core.output<S> {
  if (raw.length === 0) throw new InvalidRequestError('The request body is empty; expected a JSON object.');
  assertRequestBounds(raw, deadline);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new InvalidRequestError('We could not parse the JSON body of your request. The body must be valid JSON (Content-Type: application/json).', {
      code: 'invalid_json',
    });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new InvalidRequestError('The request body must be a JSON object.');
  }
  assertWithinBudget(deadline);
  const result = safeParse(schema, json);
  assertWithinBudget(deadline);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  if (first === undefined) throw new InvalidRequestError('Invalid request body.');
  const issue = mostSpecific(first);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const param = formatPath([...issue.path, key]);
    throw new InvalidRequestError(unknownArgument(param), { param, code: 'unknown_parameter' });
  }
  const param = formatPath(issue.path);
  const missing = issue.code === 'invalid_type' && issue.message.includes('received undefined');
  const message = missing ? `Missing required parameter: '${param}'.` : `Invalid value for '${param || 'body'}': ${issue.message}.`;
  throw new InvalidRequestError(message, { param: param || null, code: missing ? 'missing_required_parameter' : 'invalid_value' });
}

/**
 * The issue to report: for a value that matched no branch of a union (a content string or an array
 * of parts, …), the failure of the branch that got furthest into the value — the one whose first
 * issue lies deepest — so the client reads `messages[0].content[1].image_url.url`, not "Invalid input"
 * on `messages[0].content`. Ties keep the union's own issue.
 */
function mostSpecific(issue: core.$ZodIssue): core.$ZodIssue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: core.$ZodIssue | undefined;
  let bestDepth = 0;
  let tie = false;
  for (const branch of issue.errors) {
    const sub = branch[0];
    if (sub === undefined) continue;
    if (sub.path.length > bestDepth) {
      best = sub;
      bestDepth = sub.path.length;
      tie = false;
    } else if (sub.path.length === bestDepth) tie = true;
  }
  if (best === undefined || tie) return issue;
  return mostSpecific({ ...best, path: [...issue.path, ...best.path] } as core.$ZodIssue);
}

/** Chat Completions' words for an unknown argument (OpenAI's own 400 message). */
function unrecognizedArgument(param: string): string {
  return `Unrecognized request argument supplied: ${param}`;
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
