import { describe, expect, it } from 'vitest';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { InvalidRequestError } from '../../functions/shared/errors/gateway-errors';
import { parseJsonBody } from '../../functions/shared/openai/parse-body';
import { breakingSamples, objectShape, resolve, validSamples, type Candidate } from '../support/openapi/samples';
import { openApiSubset, strictTopLevelErrors } from '../support/openapi/validator';

/**
 * "Accept what OpenAI accepts", driven by OpenAI's own OpenAPI description (vendored, see
 * test/fixtures/openai/openapi/README.md): request bodies are generated from
 * `CreateChatCompletionRequest` — its examples, every top-level parameter's valid and breaking
 * values, every message role and content-part type with its fields — and each must be accepted or
 * refused by modelmux's validation exactly as OpenAI would.
 *
 * "As OpenAI would" is the description plus what OpenAI answers beyond it, each rule below with its
 * source. The description allows any property its schemas do not name (it sets no
 * `additionalProperties: false` below the top level), and OpenAI's Chat Completions API does ignore
 * them there: LangChain's `name` on tool messages, the `annotations: []` OpenAI itself returns on
 * assistant messages, agent frameworks' `metadata` on messages.
 */

const REQUEST = 'CreateChatCompletionRequest';

/** What OpenAI refuses that its description does not say, each with where it is documented. */
const RUNTIME_RULES: ReadonlyArray<{ rule: string; refuses: (body: Record<string, unknown>) => boolean }> = [
  // `strictTopLevelErrors` already refuses unknown top-level arguments ("Unrecognized request argument supplied: x").
  {
    // "The 'stream_options' parameter is only allowed when 'stream' is enabled." (providers.md §1.1)
    rule: 'stream_options needs stream: true',
    refuses: (b) => b['stream_options'] != null && b['stream'] !== true,
  },
  {
    // "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1" (code integer_below_min_value).
    rule: 'max_tokens / max_completion_tokens at least 1',
    refuses: (b) => [b['max_tokens'], b['max_completion_tokens']].some((v) => typeof v === 'number' && v < 1),
  },
  {
    // "you must provide a model parameter" for an empty model.
    rule: 'model not empty',
    refuses: (b) => b['model'] === '',
  },
  {
    // "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64".
    rule: 'tool names at most 64 characters',
    refuses: (b) =>
      Array.isArray(b['tools']) &&
      b['tools'].some((t: unknown) => {
        const fn =
          (t as { function?: { name?: unknown }; custom?: { name?: unknown } } | null)?.function ?? (t as { custom?: { name?: unknown } } | null)?.custom;
        return typeof fn?.name === 'string' && (fn.name.length > 64 || fn.name.length === 0);
      }),
  },
];

function openaiAccepts(body: Record<string, unknown>): { ok: boolean; why: string } {
  const errors = strictTopLevelErrors(REQUEST, body);
  if (errors.length > 0) return { ok: false, why: errors[0] ?? '' };
  const rule = RUNTIME_RULES.find((r) => r.refuses(body));
  return rule === undefined ? { ok: true, why: '' } : { ok: false, why: rule.rule };
}

function modelmuxAccepts(body: Record<string, unknown>): { ok: boolean; error?: InvalidRequestError } {
  try {
    parseJsonBody(JSON.stringify(body), chatCompletionRequest);
    return { ok: true };
  } catch (err) {
    if (err instanceof InvalidRequestError) return { ok: false, error: err };
    throw err;
  }
}

const base = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello!' }] };

interface Case {
  name: string;
  body: Record<string, unknown>;
}

/** Every top-level parameter: each valid sample and each breaking one, beside a minimal request. */
function parameterCases(): Case[] {
  const { properties } = objectShape({ $ref: `#/components/schemas/${REQUEST}` });
  const cases: Case[] = [];
  for (const [name, schema] of Object.entries(properties)) {
    if (name === 'messages' || name === 'model') continue;
    validSamples(schema).forEach((v, i) => cases.push({ name: `${name} valid #${i}`, body: { ...base, [name]: v } }));
    breakingSamples(schema).forEach((c) => cases.push({ name: `${name}: ${c.label}`, body: { ...base, [name]: c.value } }));
  }
  for (const v of ['', 'gpt-4o', 12]) cases.push({ name: `model ${JSON.stringify(v)}`, body: { ...base, model: v } });
  return cases;
}

/** Every message role and content-part type, built from its schema, then broken field by field. */
function messageCases(): Case[] {
  const union = resolve({ $ref: '#/components/schemas/ChatCompletionRequestMessage' });
  const roles = (union['oneOf'] as Array<{ $ref: string }>).map((r) => r.$ref);
  const cases: Case[] = [];
  for (const ref of roles) {
    const label = ref.split('/').at(-1) ?? ref;
    const messages = (m: unknown) => [{ role: 'user', content: 'first' }, m];
    validSamples({ $ref: ref }, 0, 12).forEach((m, i) => cases.push({ name: `${label} valid #${i}`, body: { ...base, messages: messages(m) } }));
    breakingSamples({ $ref: ref }).forEach((c: Candidate) => cases.push({ name: `${label} ${c.label}`, body: { ...base, messages: messages(c.value) } }));
  }
  cases.push({ name: 'no messages', body: { ...base, messages: [] } });
  cases.push({ name: 'messages not an array', body: { ...base, messages: 'hi' } });
  return cases;
}

/** The request bodies of the description's own examples (the curl `-d` payloads). */
function exampleCases(): Case[] {
  const op = openApiSubset().paths['/chat/completions']?.['post'] as { 'x-oaiMeta': { examples: Array<{ title: string; request: { curl: string } }> } };
  return op['x-oaiMeta'].examples.map((ex) => {
    const json = /-d '([\s\S]*?)'\s*$/m.exec(ex.request.curl)?.[1];
    if (json === undefined) throw new Error(`example ${ex.title} has no curl body`);
    return { name: `example "${ex.title}"`, body: JSON.parse(json) as Record<string, unknown> };
  });
}

/** Bodies real clients send, which OpenAI accepts — fields its description leaves open. */
const CLIENT_CASES: Case[] = [
  {
    name: "LangChain's tool message with name",
    body: {
      ...base,
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', content: '21 C', tool_call_id: 'call_1', name: 'get_weather' },
      ],
    },
  },
  {
    name: 'an assistant message echoed as OpenAI returned it (refusal null, annotations [])',
    body: {
      ...base,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Hello!', refusal: null, annotations: [] },
        { role: 'user', content: 'again' },
      ],
    },
  },
  {
    name: "an agent framework's metadata on a message",
    body: { ...base, messages: [{ role: 'user', content: 'hi', metadata: { client: 'ChatClient' } }] },
  },
];

/**
 * `extra_body` is not here: modelmux accepts it in Google's documented shape only (`extra_body.google`,
 * docs/prices.md), so anything else in it is a 400 naming the field (the test below).
 */
const UNKNOWN_TOP_LEVEL = ['temprature', 'top_k', 'thinking', 'num_ctx'];

describe("chat requests are accepted and refused as OpenAI's description says", () => {
  const all = [...exampleCases(), ...parameterCases(), ...messageCases(), ...CLIENT_CASES];

  it('generates a meaningful set of cases, both accepted and refused', () => {
    const verdicts = all.map((c) => openaiAccepts(c.body).ok);
    expect(verdicts.filter(Boolean).length).toBeGreaterThan(150);
    expect(verdicts.filter((v) => !v).length).toBeGreaterThan(150);
  });

  it('agrees with OpenAI on every generated request', () => {
    const disagreements: string[] = [];
    for (const c of all) {
      const openai = openaiAccepts(c.body);
      const ours = modelmuxAccepts(c.body);
      if (openai.ok !== ours.ok) {
        disagreements.push(
          `${c.name}: OpenAI ${openai.ok ? 'accepts' : `refuses (${openai.why})`}, modelmux ${ours.ok ? 'accepts' : `refuses (${ours.error?.message})`} — ${JSON.stringify(c.body).slice(0, 300)}`,
        );
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('accepts every example of the description and the bodies real clients send', () => {
    for (const c of [...exampleCases(), ...CLIENT_CASES]) {
      expect(openaiAccepts(c.body), c.name).toEqual({ ok: true, why: '' });
      expect(modelmuxAccepts(c.body).ok, c.name).toBe(true);
    }
  });

  it.each(UNKNOWN_TOP_LEVEL)("refuses the unknown top-level argument %s with OpenAI's words", (name) => {
    const body = { ...base, [name]: 1 };
    expect(openaiAccepts(body).ok).toBe(false);
    const { error } = modelmuxAccepts(body);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', message: `Unrecognized request argument supplied: ${name}` });
  });

  it.each([1, { foo: 1 }, { google: { cached_content: 'x' } }])("refuses extra_body %j that is not Google's named-cache shape, naming the field", (extra) => {
    expect(openaiAccepts({ ...base, extra_body: extra }).ok).toBe(false);
    const { error } = modelmuxAccepts({ ...base, extra_body: extra });
    expect(error?.status).toBe(400);
    expect(error?.param).toMatch(/^extra_body/);
  });

  it("names the offending field of a refused message in OpenAI's dotted form", () => {
    const { error } = modelmuxAccepts({
      ...base,
      messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'ogg' } }] }],
    });
    expect(error?.status).toBe(400);
    expect(error?.param).toMatch(/^messages\[0\]\.content/);
  });
});
