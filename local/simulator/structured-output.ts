/**
 * Structured output: how each wire format asks for JSON, and the JSON the simulated model answers
 * with (a value conforming to the schema, schema-value.ts), so a client's structured-output path
 * (openai `.parse`, AI SDK `generateObject`, LangChain `withStructuredOutput`) runs end to end offline.
 *
 * - OpenAI-shaped hosts: `response_format` `{type: "json_object"}` or `{type: "json_schema",
 *   json_schema: {schema}}` (providers.md §1.1).
 * - Anthropic: `output_config.format` `{type: "json_schema", schema}` (providers.md §2.2), or — what
 *   modelmux's adapter sends at `anthropic-version: 2023-06-01` (providers/anthropic/json-mode.ts) — a
 *   system prompt asking for "a single valid JSON object", with the JSON Schema on its last line. The
 *   real model follows such an instruction; the simulated one does so every time.
 * - Gemini: `generationConfig.responseMimeType: "application/json"`, with `responseJsonSchema` (JSON
 *   Schema) or `responseSchema` (OpenAPI subset, upper-case types) (providers.md §3.2).
 */
import { asString, field, isObject } from './json-narrowing.js';
import { valueFromSchema } from './schema-value.js';

/** The answer text: a conforming object, or `{"reply": …}` when no schema was given. */
export function structuredAnswer(schema: unknown, plainReply: string): string {
  return JSON.stringify(isObject(schema) ? valueFromSchema(schema, { all: true }) : { reply: plainReply });
}

/** OpenAI Chat Completions `response_format`. */
export function openAIStructured(body: unknown): { schema: unknown } | undefined {
  const format = field(body, 'response_format');
  if (!isObject(format)) return undefined;
  if (format['type'] === 'json_object') return { schema: undefined };
  if (format['type'] === 'json_schema') return { schema: field(format['json_schema'], 'schema') };
  return undefined;
}

/** Anthropic `output_config.format`, or a JSON-mode system prompt (modelmux's). */
export function anthropicStructured(body: unknown, systemText: string | undefined): { schema: unknown } | undefined {
  const format = field(field(body, 'output_config'), 'format');
  if (isObject(format) && format['type'] === 'json_schema') return { schema: format['schema'] };
  if (systemText === undefined || !/respond with a single valid JSON object/i.test(systemText)) return undefined;
  const lastLine = systemText.trimEnd().split('\n').at(-1) ?? '';
  try {
    const schema: unknown = JSON.parse(lastLine);
    return { schema: isObject(schema) ? schema : undefined };
  } catch {
    return { schema: undefined };
  }
}

/** Gemini `generationConfig`: JSON mime type, with `responseJsonSchema` or `responseSchema`. */
export function geminiStructured(generationConfig: unknown): { schema: unknown } | undefined {
  if (asString(field(generationConfig, 'responseMimeType')) !== 'application/json') return undefined;
  const schema = field(generationConfig, 'responseJsonSchema') ?? field(generationConfig, 'responseSchema');
  return { schema: isObject(schema) ? schema : undefined };
}

/** `{json}` for a conversation when the request asks for structured output, else nothing. */
export function optionalJson(json: { schema: unknown } | undefined): { json?: { schema: unknown } } {
  return json === undefined ? {} : { json };
}
