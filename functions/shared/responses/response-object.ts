import type { ChatCompletion, CompletionChoice, FinishReason, Usage } from '../openai/chat-response';
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { CreateResponseRequest } from './request';
import { declaredToolName } from './namespaced-tools';
import { outputItemId, responseIdOf } from './response-ids';

/**
 * The Responses API's `response` object, built from the chat core's answer (OpenAI's OpenAPI
 * description `Response`, `OutputItem`, `ResponseUsage`; openai-node 6.x `Response`). Every field the
 * description requires is present, and nothing is null where it allows only a value or absence.
 */

/** A `message` output item's content part. */
export type OutputContent = { type: 'output_text'; text: string; annotations: unknown[]; logprobs: ResponsesLogprob[] } | { type: 'refusal'; refusal: string };

/** A token's log probability, as the Responses API shapes it (`LogProb`). */
export interface ResponsesLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export type OutputItem =
  | { type: 'message'; id: string; role: 'assistant'; status: ItemStatus; content: OutputContent[] }
  | { type: 'function_call'; id: string; call_id: string; name: string; namespace?: string; arguments: string; status: ItemStatus }
  | {
      type: 'reasoning';
      id: string;
      summary: Array<{ type: 'summary_text'; text: string }>;
      content: Array<{ type: 'reasoning_text'; text: string }>;
      encrypted_content: null;
      status: ItemStatus;
    };

/** Token counts in the Responses shape (tokens), plus any extension the chat usage carries (e.g. `cost`). */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  [extension: string]: unknown;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  completed_at: number | null;
  error: { code: 'server_error' | 'rate_limit_exceeded'; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  model: string;
  output: OutputItem[];
  usage?: ResponsesUsage;
  [echo: string]: unknown;
}

/** What every response of one request shares: its ids, its times, and the request it answers. */
export interface ResponseContext {
  /** `resp_<request id>`; output item ids derive from the same request id (response-ids.ts). */
  id: string;
  requestId: string;
  /** Unix seconds the request arrived. */
  createdAt: number;
  body: CreateResponseRequest;
  chat: ChatCompletionRequest;
}

/**
 * Whether the request asked for a reasoning summary (`reasoning.summary`, or the older
 * `reasoning.generate_summary`: `auto`, `concise` or `detailed`). When it did, the reasoning a model
 * exposes is returned as the reasoning item's `summary` (`summary_text`, and the
 * `response.reasoning_summary_*` stream events, which the AI SDK and Codex CLI read); otherwise as its
 * `content` (`reasoning_text`), as OpenAI returns a model's raw reasoning. modelmux has no separate
 * summarizer: the summary is the reasoning text itself, whatever the level asked.
 */
export function wantsReasoningSummary(ctx: ResponseContext): boolean {
  return (ctx.body.reasoning?.summary ?? ctx.body.reasoning?.generate_summary) != null;
}

/** The reasoning item for `text` (see {@link wantsReasoningSummary}). */
export function reasoningItem(ctx: ResponseContext, id: string, text: string, status: ItemStatus): OutputItem {
  const part = wantsReasoningSummary(ctx);
  return {
    type: 'reasoning',
    id,
    summary: part ? [{ type: 'summary_text', text }] : [],
    content: part ? [] : [{ type: 'reasoning_text', text }],
    encrypted_content: null,
    status,
  };
}

/** Ids: `resp_…`, and `msg_…`, `rs_…`, `fc_…` with the output index — all from our request id, so logs, ledger, answer and store agree. */
export function responseContext(requestId: string, receivedAt: number, body: CreateResponseRequest, chat: ChatCompletionRequest): ResponseContext {
  return { id: responseIdOf(requestId), requestId, createdAt: Math.floor(receivedAt / 1000), body, chat };
}

/** The id of this response's output item at `outputIndex` (response-ids.ts). */
export const itemId = (ctx: ResponseContext, type: 'message' | 'reasoning' | 'function_call', outputIndex: number): string =>
  outputItemId(type, ctx.requestId, outputIndex);

/**
 * The response with no output yet (`status: in_progress`, as `response.created` carries it), or the
 * skeleton a finished one fills in. The request's settings are echoed as the core applied them
 * (the temperature default included).
 */
export function responseShell(ctx: ResponseContext, status: ResponseObject['status'] = 'in_progress'): ResponseObject {
  const b = ctx.body;
  return {
    id: ctx.id,
    object: 'response',
    created_at: ctx.createdAt,
    status,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    model: b.model,
    output: [],
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    reasoning: { effort: b.reasoning?.effort ?? null, summary: b.reasoning?.summary ?? b.reasoning?.generate_summary ?? null },
    temperature: ctx.chat.temperature,
    top_p: b.top_p ?? 1,
    text: { format: b.text?.format ?? { type: 'text' }, ...(b.text?.verbosity != null ? { verbosity: b.text.verbosity } : {}) },
    tool_choice: b.tool_choice ?? 'auto',
    tools: (b.tools ?? []).map((t) =>
      t.type === 'function'
        ? { type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null }
        : t,
    ),
    top_logprobs: b.top_logprobs ?? 0,
    truncation: 'disabled',
    metadata: b.metadata ?? {},
    background: false,
    max_tool_calls: null,
    ...(b.user !== undefined ? { user: b.user } : {}),
    ...(b.safety_identifier != null ? { safety_identifier: b.safety_identifier } : {}),
    ...(b.prompt_cache_key != null ? { prompt_cache_key: b.prompt_cache_key } : {}),
  };
}

/** A finished buffered chat completion as a `response` (its first choice: the Responses API has no `n`). */
export function toResponse(ctx: ResponseContext, completion: ChatCompletion): ResponseObject {
  const choice = completion.choices[0];
  const out = responseShell(ctx);
  const outcome = finish(choice?.finish_reason ?? 'stop');
  out.status = outcome.status;
  out.incomplete_details = outcome.incomplete_details;
  out.completed_at = outcome.status === 'completed' ? Math.floor(Date.now() / 1000) : null;
  out.output = choice === undefined ? [] : outputItems(ctx, choice, outcome.itemStatus);
  out.usage = toResponsesUsage(completion.usage);
  return out;
}

/** `finish_reason` → the response's status: `length` is `incomplete` (max_output_tokens), as is `content_filter`. */
export function finish(reason: FinishReason | null): Pick<ResponseObject, 'status' | 'incomplete_details'> & { itemStatus: ItemStatus } {
  switch (reason) {
    case 'length':
      return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, itemStatus: 'incomplete' };
    case 'content_filter':
      return { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, itemStatus: 'incomplete' };
    default:
      return { status: 'completed', incomplete_details: null, itemStatus: 'completed' };
  }
}

function outputItems(ctx: ResponseContext, choice: CompletionChoice, status: ItemStatus): OutputItem[] {
  const items: OutputItem[] = [];
  const m = choice.message;
  if (m.reasoning_content) items.push(reasoningItem(ctx, itemId(ctx, 'reasoning', items.length), m.reasoning_content, status));
  const content: OutputContent[] = [];
  if (m.content !== null && m.content !== '')
    content.push({ type: 'output_text', text: m.content, annotations: [], logprobs: toResponsesLogprobs(choice.logprobs) });
  if (m.refusal !== null && m.refusal !== '') content.push({ type: 'refusal', refusal: m.refusal });
  if (content.length > 0) items.push({ type: 'message', id: itemId(ctx, 'message', items.length), role: 'assistant', status, content });
  for (const call of m.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    items.push({
      type: 'function_call',
      id: itemId(ctx, 'function_call', items.length),
      call_id: call.id,
      ...declaredToolName(ctx.body, call.function.name),
      arguments: call.function.arguments,
      status,
    });
  }
  return items;
}

/** Chat usage → Responses usage; an extension field (e.g. `cost`, USD) is carried over as is. */
export function toResponsesUsage(u: Usage): ResponsesUsage {
  const { prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details, completion_tokens_details, ...extensions } = u as Usage &
    Record<string, unknown>;
  return {
    input_tokens: prompt_tokens,
    input_tokens_details: { cached_tokens: prompt_tokens_details?.cached_tokens ?? 0, cache_write_tokens: prompt_tokens_details?.cache_write_tokens ?? 0 },
    output_tokens: completion_tokens,
    output_tokens_details: { reasoning_tokens: completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens,
    ...extensions,
  };
}

/** Chat's `logprobs.content` (as OpenAI returns it) in the Responses shape; [] when there are none. */
export function toResponsesLogprobs(logprobs: unknown): ResponsesLogprob[] {
  const content = (logprobs as { content?: unknown } | null | undefined)?.content;
  if (!Array.isArray(content)) return [];
  return content.map(
    (t: { token: string; logprob: number; bytes?: number[] | null; top_logprobs?: Array<{ token: string; logprob: number; bytes?: number[] | null }> }) => ({
      token: t.token,
      logprob: t.logprob,
      bytes: t.bytes ?? [],
      top_logprobs: (t.top_logprobs ?? []).map((a) => ({ token: a.token, logprob: a.logprob, bytes: a.bytes ?? [] })),
    }),
  );
}
