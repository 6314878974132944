/**
 * Structural bounds on what a client can send, checked on the raw JSON text before it is parsed or
 * validated (one linear scan, no recursion, no allocation per value), so no request can make the
 * gateway's own code fail — a JSON nested 5,000 deep made our serialisation of the upstream request
 * throw, which the router then blamed on the upstream (issue 10). Each bound is far above anything
 * OpenAI documents accepting: structured-output schemas nest at most 10 levels (strict mode), a
 * request has at most 128 tools and 2,048 embedding inputs, and the body itself is at most 6 MB.
 * Field-level limits (n, dimensions, embedding inputs) live beside their routes.
 */
import { InvalidRequestError } from './errors';

/** Deepest nesting of objects and arrays. */
export const MAX_JSON_DEPTH = 128;
/** Most elements in one array. */
export const MAX_ARRAY_LENGTH = 100_000;
/** Most members in one object. */
export const MAX_OBJECT_MEMBERS = 10_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * @throws InvalidRequestError (400, code `request_too_complex`) naming the bound a body passes.
 *   Malformed JSON is left to the parser (its own clear 400).
 */
export function assertRequestBounds(raw: string): void {
  const counts: number[] = []; // elements or members seen at each open level
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      counts.push(1);
      if (counts.length > MAX_JSON_DEPTH) throw tooComplex(`JSON nesting deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      counts.pop();
    } else if (c === COMMA && counts.length > 0) {
      const n = (counts[counts.length - 1] ?? 0) + 1;
      counts[counts.length - 1] = n;
      if (n > MAX_ARRAY_LENGTH) throw tooComplex(`an array longer than ${MAX_ARRAY_LENGTH} elements`);
      if (n > MAX_OBJECT_MEMBERS && openerBefore(raw, i) === OPEN_OBJECT) throw tooComplex(`an object with more than ${MAX_OBJECT_MEMBERS} members`);
    }
  }
}

/** The bracket that opened the innermost level at `i` (only consulted past the member bound: rare). */
function openerBefore(raw: string, i: number): number {
  let depth = 0;
  let inString = false;
  for (let j = i - 1; j >= 0; j--) {
    const c = raw.charCodeAt(j);
    if (c === QUOTE) {
      let slashes = 0;
      for (let k = j - 1; k >= 0 && raw.charCodeAt(k) === BACKSLASH; k--) slashes++;
      if (slashes % 2 === 0) inString = !inString;
      continue;
    }
    if (inString) continue;
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth++;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 0) return c;
      depth--;
    }
  }
  return OPEN_ARRAY;
}

function tooComplex(what: string): InvalidRequestError {
  return new InvalidRequestError(`The request body has ${what}, more than modelmux accepts.`, { code: 'request_too_complex' });
}
