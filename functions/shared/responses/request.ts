import * as z from 'zod';

/**
 * The Responses API request (`POST /v1/responses`), as OpenAI's OpenAPI description types
 * `CreateResponse` (vendored under test/fixtures/openai/openapi/) and openai-node 6.x
 * `ResponseCreateParams` sends it, for what modelmux can serve over its chat core:
 *
 * - `input`: a string, or items — messages (`input_text` / `input_image` / `input_file` parts;
 *   assistant `output_text` / `refusal`), `function_call`, `function_call_output`, and `reasoning`
 *   items echoed back; `instructions`.
 * - function `tools`, `tool_choice`, `parallel_tool_calls`; `max_output_tokens`, `temperature`,
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

const cacheBreakpoint = z.lazy(() => z.strictObject({ mode: z.literal('explicit') }).optional());

const inputText = z.lazy(() => z.strictObject({ type: z.literal('input_text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint }));
const inputImage = z.lazy(() =>
  z.strictObject({
    type: z.literal('input_image'),
    image_url: z.string().nullish(),
    file_id: z.string().nullish(),
    detail: z.enum(['low', 'high', 'auto', 'original']).optional(),
    prompt_cache_breakpoint: cacheBreakpoint,
  }),
);
const inputFile = z.lazy(() =>
  z.strictObject({
    type: z.literal('input_file'),
    file_id: z.string().nullish(),
    filename: z.string().optional(),
    file_data: z.string().optional(),
    file_url: z.string().optional(),
    detail: z.enum(['low', 'high', 'auto']).optional(),
    prompt_cache_breakpoint: cacheBreakpoint,
  }),
);
const outputText = z.lazy(() =>
  z.strictObject({
    type: z.literal('output_text'),
    text: z.string(),
    annotations: z.array(z.unknown()).optional(),
    logprobs: z.array(z.unknown()).optional(),
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
    id: z.string().optional(),
    status: itemStatus.optional(),
    phase: z.enum(['commentary', 'final_answer']).nullish(),
  }),
);

const functionCallItem = z.lazy(() =>
  z.strictObject({
    type: z.literal('function_call'),
    call_id: z.string().min(1),
    name: z.string().min(1),
    arguments: z.string(),
    id: z.string().optional(),
    status: itemStatus.optional(),
  }),
);

const functionCallOutputItem = z.lazy(() =>
  z.strictObject({
    type: z.literal('function_call_output'),
    call_id: z.string().min(1).max(64),
    output: z.union([z.string(), z.array(z.discriminatedUnion('type', [inputText, inputImage, inputFile]))]),
    id: z.string().nullish(),
    status: itemStatus.nullish(),
  }),
);

const reasoningItem = z.lazy(() =>
  z.strictObject({
    type: z.literal('reasoning'),
    id: z.string(),
    summary: z.array(z.strictObject({ type: z.literal('summary_text'), text: z.string() })),
    content: z.array(z.strictObject({ type: z.literal('reasoning_text'), text: z.string() })).optional(),
    encrypted_content: z.string().nullish(),
    status: itemStatus.optional(),
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
    name: z.string().min(1).max(64),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
);
export type ResponsesFunctionTool = z.infer<typeof responsesFunctionTool>;

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
  'namespace',
  'tool_search',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'apply_patch',
] as const;

const builtInTool = z.lazy(() => z.looseObject({ type: z.enum(BUILT_IN_TOOL_TYPES) }));

const tool = z.lazy(() =>
  z.discriminatedUnion('type', [responsesFunctionTool, builtInTool], {
    error: (iss) => (iss.code === 'invalid_union' ? `unknown tool type; modelmux serves function tools` : undefined),
  }),
);

/** `tool_choice`: a mode, a named function, or any other form (hosted tools, allowed_tools, mcp, custom), refused by name later. */
const toolChoice = z.lazy(() =>
  z.union([
    z.enum(['none', 'auto', 'required']),
    z.discriminatedUnion('type', [
      z.strictObject({ type: z.literal('function'), name: z.string() }),
      z.looseObject({ type: z.enum(['allowed_tools', 'mcp', 'custom', 'apply_patch', 'shell', 'programmatic_tool_calling', 'file_search', 'web_search_preview', 'computer', 'computer_use_preview', 'computer_use', 'web_search_preview_2025_03_11', 'image_generation', 'code_interpreter']) }),
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
      description: z.string().optional(),
      strict: z.boolean().nullish(),
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
    model: z.string().min(1),
    input: z.union([z.string(), z.array(inputItem)]),
    instructions: z.string().nullish(),
    tools: z.array(tool).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().nullish(),
    max_output_tokens: z.number().int().positive().nullish(),
    max_tool_calls: z.number().int().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    text: z.strictObject({ format: textFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullish() }).optional(),
    reasoning: z
      .strictObject({
        effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullish(),
        summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
        generate_summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
        mode: z.string().nullish(),
        context: z.enum(['auto', 'current_turn', 'all_turns']).nullish(),
      })
      .nullish(),
    include: z.array(include).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.strictObject({ include_obfuscation: z.boolean().optional() }).nullish(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullish(),
    store: z.boolean().nullish(),
    background: z.boolean().nullish(),
    truncation: z.enum(['auto', 'disabled']).nullish(),
    service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast']).nullish(),
    user: z.string().optional(),
    safety_identifier: z.string().max(64).nullish(),
    prompt_cache_key: z.string().nullish(),
    prompt_cache_retention: z.enum(['in_memory', '24h']).nullish(),
    prompt_cache_options: z.strictObject({ mode: z.enum(['implicit', 'explicit']).optional(), ttl: z.literal('30m').optional() }).optional(),
    moderation: z
      .strictObject({ model: z.string(), policy: z.strictObject({ input: moderationMode.nullish(), output: moderationMode.nullish() }).nullish() })
      .nullish(),
    previous_response_id: z.string().nullish(),
    conversation: z.unknown().optional(),
    prompt: z.unknown().optional(),
  }),
);

/** A validated Responses request. */
export type CreateResponseRequest = z.infer<typeof createResponseRequest>;

/** The Responses API's words for an unknown argument (OpenAI: "Unknown parameter: 'input[1].metadata'."). */
export function unknownParameter(param: string): string {
  return `Unknown parameter: '${param}'.`;
}
