/**
 * Structural bounds on what a client can send, checked on the raw JSON text before it is parsed or
 * validated: ONE linear pass (each character read once, a fixed-size stack, no allocation per value),
 * so no request can make the gateway's own code fail — a JSON nested 5,000 deep made our serialisation
 * of the upstream request throw, which the router then blamed on the upstream — nor spend
 * more than a few milliseconds of CPU per megabyte before it is refused (an earlier scan looked back from every comma past the 10,000th element, quadratic: 28 s for one 200 KB body).
 *
 * Each bound is far above anything a real client sends: structured-output schemas nest at most 10
 * levels (OpenAI strict mode), a request has at most 128 tools and 2,048 embedding inputs, Anthropic
 * takes at most 100,000 messages (docs/providers.md §2.2), and the body itself is at most 6 MB. The value
 * budget bounds the work every later step (JSON.parse, the schema, token estimates, translation) does
 * per value; the time budget is a last stop, checked as the scan goes and again after the schema.
 * Field-level limits (n, dimensions, embedding inputs) live beside their routes.
 */
import { InvalidRequestError } from '../errors/gateway-errors';

/** Deepest nesting of objects and arrays. */
export const MAX_JSON_DEPTH = 128;
/** Most elements in one array (Anthropic's most messages per request). */
export const MAX_ARRAY_LENGTH = 100_000;
/** Most members in one object. */
export const MAX_OBJECT_MEMBERS = 10_000;
/**
 * Most values in the whole body: each object, array and string, plus one per separating comma (so a
 * number or literal element counts too). An upper bound on the values JSON.parse and the schema visit.
 */
export const MAX_JSON_VALUES = 200_000;
/** Longest object key, characters (an unknown key is echoed in the 400's message). */
export const MAX_KEY_LENGTH = 256;
/** Wall-clock budget for checking one body (scan, parse and schema), ms. */
export const VALIDATION_BUDGET_MS = 250;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
/** Characters scanned between two looks at the clock. */
const CLOCK_EVERY = 1 << 16;

/** The end of a body's validation time budget (`performance.now()` ms). */
export interface ValidationDeadline {
  at: number;
}

/** A deadline `budgetMs` from now. */
export function validationDeadline(budgetMs: number = VALIDATION_BUDGET_MS): ValidationDeadline {
  return { at: performance.now() + budgetMs };
}

/**
 * @throws InvalidRequestError (400, code `request_too_complex`) when the deadline has passed.
 */
export function assertWithinBudget(deadline: ValidationDeadline): void {
  if (performance.now() > deadline.at) throw tooComplex('more structure than modelmux checks in its time budget');
}

/**
 * One linear pass over `raw`: depth, elements per array, members per object, values in all, key length.
 * @throws InvalidRequestError (400, code `request_too_complex`) naming the bound a body passes, or when
 *   the scan outlives `deadline`. Malformed JSON is left to the parser (its own clear 400).
 */
export function assertRequestBounds(raw: string, deadline: ValidationDeadline = validationDeadline()): void {
  const isObject = new Uint8Array(MAX_JSON_DEPTH + 1); // 1 when the level was opened by `{`
  const counts = new Int32Array(MAX_JSON_DEPTH + 1); // elements or members seen at each open level
  let depth = 0;
  let values = 0;
  let nextClock = CLOCK_EVERY;
  for (let i = 0; i < raw.length; i++) {
    if (i >= nextClock) {
      assertWithinBudget(deadline);
      nextClock = i + CLOCK_EVERY;
    }
    const c = raw.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      i = closingQuote(raw, start);
      if (i < 0) return; // unterminated: the parser's 400
      if (i - start > MAX_KEY_LENGTH && depth > 0 && isObject[depth] === 1 && nextNonSpace(raw, i + 1) === COLON) {
        throw tooComplex(`an object key longer than ${MAX_KEY_LENGTH} characters`);
      }
      values++;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > MAX_JSON_DEPTH) throw tooComplex(`JSON nesting deeper than ${MAX_JSON_DEPTH} levels`);
      isObject[depth] = c === OPEN_OBJECT ? 1 : 0;
      counts[depth] = 1;
      values++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
    } else if (c === COMMA && depth > 0) {
      const n = ++counts[depth]!;
      if (isObject[depth] === 1) {
        if (n > MAX_OBJECT_MEMBERS) throw tooComplex(`an object with more than ${MAX_OBJECT_MEMBERS} members`);
      } else if (n > MAX_ARRAY_LENGTH) throw tooComplex(`an array longer than ${MAX_ARRAY_LENGTH} elements`);
      // A number or literal element counts as a value at its comma (strings and containers at their start).
      values++;
    }
    if (values > MAX_JSON_VALUES) throw tooComplex(`more than ${MAX_JSON_VALUES} values`);
  }
}

/**
 * The index of the quote that closes the string starting at `start` (-1 when none): the native
 * `indexOf` jumps between quotes; a quote preceded by an odd run of backslashes is escaped. Each
 * character is looked at a bounded number of times (once by indexOf, at most once more when it is
 * a backslash just before a quote).
 */
function closingQuote(raw: string, start: number): number {
  let from = start;
  for (;;) {
    const q = raw.indexOf('"', from);
    if (q < 0) return -1;
    let slashes = 0;
    for (let k = q - 1; k >= start && raw.charCodeAt(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return q;
    from = q + 1;
  }
}

/**
 * The first non-whitespace character code at or after `i` (-1 at the end). Called once per long string,
 * it reads only the whitespace after that string, so all calls together read each character at most once.
 */
function nextNonSpace(raw: string, i: number): number {
  for (let j = i; j < raw.length; j++) {
    const c = raw.charCodeAt(j);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
  }
  return -1;
}

function tooComplex(what: string): InvalidRequestError {
  return new InvalidRequestError(`The request body has ${what}, more than modelmux accepts.`, { code: 'request_too_complex' });
}
