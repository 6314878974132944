import * as z from '../validation/zod';

/**
 * The Responses API request (`POST /v1/responses`), as OpenAI's OpenAPI description types
 * `CreateResponse` (vendored under test/fixtures/openai/openapi/) and openai-node 6.x
 * `ResponseCreateParams` sends it, for what modelmux can serve over its chat core:
 *
 * - `input`: a string, or items — messages (`input_text` / `input_image` / `input_file` parts;
 *   assistant `output_text` / `refusal`), `function_call`, `function_call_output`, and `reasoning`
 *   items echoed back; `instructions`.
 * - function `tools` (alone or in a `namespace`), `tool_choice`, `parallel_tool_calls`; `max_output_tokens`, `temperature`,
 *   `top_p`, `text.format` (→ `response_format`), `text.verbosity`, `reasoning.effort`, `stream`,
 *   `top_logprobs` with `include: ["message.output_text.logprobs"]`, and the pass-through hints
 *   (`user`, `safety_identifier`, `prompt_cache_key`, `service_tier`, …).
 * - `metadata` (echoed on the response), `store` (default true: the response is stored, app/responses.ts)
 *   and `previous_response_id` (the stored conversation it continues, conversation-state.ts).
 *
 * Every level is strict, as OpenAI's Responses API is ("Unknown parameter: 'input[1].metadata'.",
 * code `unknown_parameter`). Fields that need features modelmux does not have — `conversation`,
 * `prompt`, `background`, built-in tools — are parsed here and refused with a clear 400 by the
 * translation (to-chat.ts); `item_reference` inputs are resolved from the store first.
 */

const cacheBreakpoint = z.lazy(() => z.optional(z.strictObject({ mode: z.literal('explicit') })));

const inputText = z.lazy(() => z.strictObject({ type: z.literal('input_text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint }));
const inputImage = z.lazy(() =>
  z.strictObject({
    type: z.literal('input_image'),
    image_url: z.nullish(z.string()),
    file_id: z.nullish(z.string()),
    detail: z.optional(z.enum(['low', 'high', 'auto', 'original'])),
    prompt_cache_breakpoint: cacheBreakpoint,
  }),
);
const inputFile = z.lazy(() =>
  z.strictObject({
    type: z.literal('input_file'),
    file_id: z.nullish(z.string()),
    filename: z.optional(z.string()),
    file_data: z.optional(z.string()),
    file_url: z.optional(z.string()),
    detail: z.optional(z.enum(['low', 'high', 'auto'])),
    prompt_cache_breakpoint: cacheBreakpoint,
  }),
);
const outputText = z.lazy(() =>
  z.strictObject({
    type: z.literal('output_text'),
    text: z.string(),
    annotations: z.optional(z.array(z.unknown())),
    logprobs: z.optional(z.array(z.unknown())),
  }),
);
const refusal = z.lazy(() => z.strictObject({ type: z.literal('refusal'), refusal: z.string() }));

/** A content part of an input message: what a user or system sends, or what an assistant said. */
export const messagePart = z.lazy(() => z.discriminatedUnion('type', [inputText, inputImage, inputFile, outputText, refusal]));
export type MessagePart = z.infer<typeof messagePart>;

const itemStatus = z.lazy(() => z.enum(['in_progress', 'completed', 'incomplete']));

const messageItem = z.lazy(() =>
  z.strictObject({
    type: z.literal('message'),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([z.string(), z.array(messagePart)]),
    id: z.optional(z.string()),
    status: z.optional(itemStatus),
    phase: z.nullish(z.enum(['commentary', 'final_answer'])),
  }),
);

const functionCallItem = z.lazy(() =>
  z.strictObject({
    type: z.literal('function_call'),
    call_id: z.string().check(z.minLength(1)),
    name: z.string().check(z.minLength(1)),
    namespace: z.optional(z.string()),
    arguments: z.string(),
    id: z.optional(z.string()),
    status: z.optional(itemStatus),
  }),
);

const functionCallOutputItem = z.lazy(() =>
  z.strictObject({
    type: z.literal('function_call_output'),
    call_id: z.string().check(z.minLength(1), z.maxLength(64)),
    output: z.union([z.string(), z.array(z.discriminatedUnion('type', [inputText, inputImage, inputFile]))]),
    id: z.nullish(z.string()),
    status: z.nullish(itemStatus),
  }),
);

const reasoningItem = z.lazy(() =>
  z.strictObject({
    type: z.literal('reasoning'),
    id: z.string(),
    summary: z.array(z.strictObject({ type: z.literal('summary_text'), text: z.string() })),
    content: z.optional(z.array(z.strictObject({ type: z.literal('reasoning_text'), text: z.string() }))),
    encrypted_content: z.nullish(z.string()),
    status: z.optional(itemStatus),
  }),
);

const itemReference = z.lazy(() => z.strictObject({ type: z.literal('item_reference'), id: z.string() }));

const SUPPORTED_ITEMS = "modelmux takes input items of type 'message', 'function_call', 'function_call_output' and 'reasoning'";

/**
 * One input item. A message may leave out `type` (OpenAI's `EasyInputMessage`), an item reference
 * too (`ItemReferenceParam`): both are given their type before the union picks a branch.
 */
export const inputItem = z.lazy(() =>
  z.preprocess(
    (v) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v) || 'type' in v) return v;
      if ('role' in v) return { type: 'message', ...v };
      if ('id' in v) return { type: 'item_reference', ...v };
      return v;
    },
    z.discriminatedUnion('type', [messageItem, functionCallItem, functionCallOutputItem, reasoningItem, itemReference], {
      error: (iss) => (iss.code === 'invalid_union' ? `${SUPPORTED_ITEMS}; built-in tool calls and other item types are not supported` : undefined),
    }),
  ),
);
export type InputItem = z.infer<typeof inputItem>;

/** A function tool (Responses shape: name and parameters at the top, not under `function`). */
export const responsesFunctionTool = z.lazy(() =>
  z.strictObject({
    type: z.literal('function'),
    name: z.string().check(z.minLength(1), z.maxLength(64)),
    description: z.nullish(z.string()),
    parameters: z.nullish(z.record(z.string(), z.unknown())),
    strict: z.nullish(z.boolean()),
    /** Deferred for tool search (Codex's MCP tools): modelmux has none, so the tool is simply declared. */
    defer_loading: z.optional(z.boolean()),
  }),
);

/** Function tools under one name (`NamespaceToolParam`), flattened for the model (namespaced-tools.ts). */
export const namespaceTool = z.lazy(() =>
  z.strictObject({
    type: z.literal('namespace'),
    name: z.string().check(z.minLength(1), z.regex(/^[a-zA-Z0-9_-]+$/)),
    description: z.nullish(z.string()),
    tools: z.array(responsesFunctionTool).check(z.minLength(1)),
  }),
);

/**
 * OpenAI's other tools (`Tool` in the description): parsed loosely, so the translation can refuse
 * each by name with a 400 rather than as an unknown argument.
 */
export const BUILT_IN_TOOL_TYPES = [
  'file_search',
  'computer',
  'computer_use_preview',
  'web_search',
  'web_search_2025_08_26',
  'mcp',
  'code_interpreter',
  'programmatic_tool_calling',
  'image_generation',
  'local_shell',
  'shell',
  'custom',
  'tool_search',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'apply_patch',
] as const;

const builtInTool = z.lazy(() => z.looseObject({ type: z.enum(BUILT_IN_TOOL_TYPES) }));

const tool = z.lazy(() =>
  z.discriminatedUnion('type', [responsesFunctionTool, namespaceTool, builtInTool], {
    error: (iss) => (iss.code === 'invalid_union' ? `unknown tool type; modelmux serves function tools (alone or in a namespace)` : undefined),
  }),
);

/** `tool_choice`: a mode, a named function, or any other form (hosted tools, allowed_tools, mcp, custom), refused by name later. */
const toolChoice = z.lazy(() =>
  z.union([
    z.enum(['none', 'auto', 'required']),
    z.discriminatedUnion('type', [
      z.strictObject({ type: z.literal('function'), name: z.string() }),
      z.looseObject({
        type: z.enum([
          'allowed_tools',
          'mcp',
          'custom',
          'apply_patch',
          'shell',
          'programmatic_tool_calling',
          'file_search',
          'web_search_preview',
          'computer',
          'computer_use_preview',
          'computer_use',
          'web_search_preview_2025_03_11',
          'image_generation',
          'code_interpreter',
        ]),
      }),
    ]),
  ]),
);

const textFormat = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('text') }),
    z.strictObject({ type: z.literal('json_object') }),
    z.strictObject({
      type: z.literal('json_schema'),
      name: z.string(),
      schema: z.record(z.string(), z.unknown()),
      description: z.optional(z.string()),
      strict: z.nullish(z.boolean()),
    }),
  ]),
);

const include = z.lazy(() =>
  z.enum([
    'file_search_call.results',
    'web_search_call.results',
    'web_search_call.action.sources',
    'message.input_image.image_url',
    'computer_call_output.output.image_url',
    'code_interpreter_call.outputs',
    'reasoning.encrypted_content',
    'message.output_text.logprobs',
  ]),
);

const moderationMode = z.lazy(() => z.strictObject({ mode: z.enum(['score', 'block']) }));

/** The validated Responses request. */
export const createResponseRequest = z.lazy(() =>
  z.strictObject({
    model: z.string().check(z.minLength(1)),
    input: z.union([z.string(), z.array(inputItem)]),
    instructions: z.nullish(z.string()),
    tools: z.optional(z.array(tool)),
    tool_choice: z.optional(toolChoice),
    parallel_tool_calls: z.nullish(z.boolean()),
    max_output_tokens: z.nullish(z.number().check(z.int(), z.positive())),
    max_tool_calls: z.nullish(z.number().check(z.int())),
    temperature: z.nullish(z.number().check(z.gte(0), z.lte(2))),
    top_p: z.nullish(z.number().check(z.gte(0), z.lte(1))),
    top_logprobs: z.nullish(z.number().check(z.int(), z.gte(0), z.lte(20))),
    text: z.optional(z.strictObject({ format: z.optional(textFormat), verbosity: z.nullish(z.enum(['low', 'medium', 'high'])) })),
    reasoning: z.nullish(
      z.strictObject({
        effort: z.nullish(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
        summary: z.nullish(z.enum(['auto', 'concise', 'detailed'])),
        generate_summary: z.nullish(z.enum(['auto', 'concise', 'detailed'])),
        mode: z.nullish(z.string()),
        context: z.nullish(z.enum(['auto', 'current_turn', 'all_turns'])),
      }),
    ),
    include: z.nullish(z.array(include)),
    stream: z.nullish(z.boolean()),
    stream_options: z.nullish(z.strictObject({ include_obfuscation: z.optional(z.boolean()) })),
    metadata: z.nullish(z.record(z.string().check(z.maxLength(64)), z.string().check(z.maxLength(512)))),
    // Codex CLI's per-request tags (installation id, session, window); accepted and not sent upstream.
    client_metadata: z.nullish(z.record(z.string(), z.unknown())),
    store: z.nullish(z.boolean()),
    background: z.nullish(z.boolean()),
    truncation: z.nullish(z.enum(['auto', 'disabled'])),
    service_tier: z.nullish(z.enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast'])),
    user: z.optional(z.string()),
    safety_identifier: z.nullish(z.string().check(z.maxLength(64))),
    prompt_cache_key: z.nullish(z.string()),
    prompt_cache_retention: z.nullish(z.enum(['in_memory', '24h'])),
    prompt_cache_options: z.optional(z.strictObject({ mode: z.optional(z.enum(['implicit', 'explicit'])), ttl: z.optional(z.literal('30m')) })),
    moderation: z.nullish(
      z.strictObject({ model: z.string(), policy: z.nullish(z.strictObject({ input: z.nullish(moderationMode), output: z.nullish(moderationMode) })) }),
    ),
    previous_response_id: z.nullish(z.string()),
    conversation: z.optional(z.unknown()),
    prompt: z.optional(z.unknown()),
  }),
);

/** A validated Responses request. */
export type CreateResponseRequest = z.infer<typeof createResponseRequest>;

/** The Responses API's words for an unknown argument (OpenAI: "Unknown parameter: 'input[1].metadata'."). */
export function unknownParameter(param: string): string {
  return `Unknown parameter: '${param}'.`;
}
