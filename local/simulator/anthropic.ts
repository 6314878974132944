/**
 * The native Anthropic Messages API: `POST /v1/messages` (and `/v1/messages/count_tokens`: its
 * `{input_tokens}` by the simulator's count). Reading a request enforces what the real API refuses with
 * 400 invalid_request_error: missing `model` / `max_tokens` / `messages`, temperature outside 0..1, a
 * thinking budget under 1024 or not under `max_tokens`, a role other than user/assistant, a
 * `tool_result` without its `tool_use` in the previous assistant turn (consecutive same-role messages
 * merged first, as the API does), a `thinking` block whose signature the simulator did not issue, and
 * `temperature` with `top_p` on the models that refuse both. The answer: a `message`, or its event
 * stream (`event:` + `data:`): message_start, per block start / deltas / stop (a ping after the first
 * start), message_delta with usage and stop reason, message_stop (providers.md §2.2, §2.6).
 */
import { jsonEvent, type Reply, splitArguments, splitText, type SseEvent } from './deliver.js';
import { streamErrorEvent } from './errors.js';
import { asArray, asNumber, asString, asStrings, field, isObject, type JsonObject, promptTokens } from './json-narrowing.js';
import { chooseTools, type Conversation, conversationOf, type Message, planReply, type ReplyPlan } from './reply.js';
import { isRetiredModel } from './retired-models.js';
import type { Problem, SimCall } from './types.js';

/** Answer a native Anthropic call; a {@link Problem} is rendered by the caller. */
export function handleAnthropic(call: SimCall): Reply | Problem {
  const { op } = call.route;
  if (op !== 'anthropic-messages' && op !== 'anthropic-count-tokens') return { kind: 'no-route', method: call.method, path: call.url.pathname };
  // count_tokens takes no max_tokens; the reader's rules about it do not apply.
  const counting = op === 'anthropic-count-tokens';
  const body = counting && isObject(call.body) && call.body['max_tokens'] === undefined ? { ...call.body, max_tokens: Number.MAX_SAFE_INTEGER } : call.body;
  const req = readAnthropicMessages(body);
  if ('kind' in req) return req;
  if (isRetiredModel(req.model)) return { kind: 'model-not-found', model: req.model };
  if (counting)
    return { kind: 'json', status: 200, headers: { 'request-id': call.requestId }, body: { input_tokens: promptTokens(req.conversation.messageTexts) } };
  const plan = planReply(req.conversation, { replyWords: call.replyWords });
  return req.stream
    ? anthropicStream(call, req.model, plan)
    : { kind: 'json', status: 200, headers: { 'request-id': call.requestId }, body: message(call, req.model, plan) };
}

/** Blocks of a message (`content` as a string is one text block). */
function blocksOf(content: unknown): JsonObject[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : asArray(content).filter(isObject);
}

const textsOf = (blocks: readonly JsonObject[], type = 'text'): string[] => blocks.filter((b) => b['type'] === type).map((b) => asString(b[type]) ?? '');

function toolResultText(block: JsonObject): string {
  const content = block['content'];
  return typeof content === 'string'
    ? content
    : blocksOf(content)
        .map((b) => asString(b['text']) ?? '')
        .filter((t) => t !== '')
        .join('\n');
}

/** A message in the shared shape: text, images, tool results; tool uses and thinking counted. */
function messageOf(m: JsonObject): Message {
  const blocks = blocksOf(m['content']);
  return {
    role: m['role'] === 'user' ? 'user' : 'assistant',
    texts: textsOf(blocks),
    images: blocks.filter((b) => b['type'] === 'image').length,
    results: blocks.filter((b) => b['type'] === 'tool_result').map(toolResultText),
    extra: [
      ...blocks.filter((b) => b['type'] === 'tool_use').map((b) => `${asString(b['name']) ?? ''} ${JSON.stringify(b['input'] ?? {})}`),
      ...textsOf(blocks, 'thinking'),
    ],
  };
}

/** Client tools the model may call: server tools (no input_schema) and deferred ones (tool search) aside. */
function toolsOf(body: JsonObject): Conversation['tools'] {
  const tools = asArray(body['tools'])
    .filter(isObject)
    .filter((t) => typeof t['name'] === 'string' && isObject(t['input_schema']) && t['defer_loading'] !== true)
    .map((t) => ({ name: String(t['name']), parameters: t['input_schema'] }));
  const choice = body['tool_choice'];
  return chooseTools(tools, field(choice, 'type') === 'none', field(choice, 'type') === 'tool' ? [field(choice, 'name')] : undefined);
}

/**
 * `output_config.format` json_schema, or modelmux's JSON mode at `anthropic-version: 2023-06-01`
 * (providers/anthropic/json-mode.ts): a system prompt asking for "a single valid JSON object", the JSON
 * Schema on its last line, which the simulated model always follows.
 */
function structuredOf(body: JsonObject, system: string | undefined): { schema: unknown } | undefined {
  const format = field(body['output_config'], 'format');
  if (isObject(format) && format['type'] === 'json_schema') return { schema: format['schema'] };
  if (system === undefined || !/respond with a single valid JSON object/i.test(system)) return undefined;
  try {
    const schema: unknown = JSON.parse(system.trimEnd().split('\n').at(-1) ?? '');
    return { schema: isObject(schema) ? schema : undefined };
  } catch {
    return { schema: undefined };
  }
}

/** Validate and read the request; a {@link Problem} means answer 400. */
function readAnthropicMessages(body: unknown): { model: string; stream: boolean; conversation: Conversation } | Problem {
  const bad = (message: string): Problem => ({ kind: 'bad-request', message });
  if (!isObject(body)) return bad('Request body must be a JSON object.');
  const model = asString(body['model']);
  if (!model) return bad('model: Field required');
  const maxTokens = asNumber(body['max_tokens']);
  if (maxTokens === undefined) return bad('max_tokens: Field required');
  if (!Array.isArray(body['messages'])) return bad('messages: Field required');
  const temperature = asNumber(body['temperature']);
  if (temperature !== undefined && (temperature < 0 || temperature > 1)) return bad('temperature: range: 0..1');
  const thinking = isObject(body['thinking']) ? body['thinking'] : undefined;
  if (thinking?.['type'] === 'enabled') {
    const budget = asNumber(thinking['budget_tokens']);
    if (budget === undefined || budget < 1024) return bad('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (maxTokens <= budget) return bad('`max_tokens` must be greater than `thinking.budget_tokens`.');
  }
  const problem = checkTurns(body['messages']) ?? checkSampling(model, body);
  if (problem !== undefined) return problem;
  const system =
    body['system'] === undefined || body['system'] === null
      ? undefined
      : typeof body['system'] === 'string'
        ? body['system']
        : textsOf(blocksOf(body['system'])).join('\n');
  return {
    model,
    stream: body['stream'] === true,
    conversation: conversationOf(body['messages'].filter(isObject).map(messageOf), system, {
      tools: toolsOf(body),
      toolForced: ['any', 'tool'].includes(String(field(body['tool_choice'], 'type'))),
      maxTokens,
      stop: asStrings(body['stop_sequences']),
      reasoning: thinking?.['type'] === 'enabled' || thinking?.['type'] === 'adaptive',
      json: structuredOf(body, system),
    }),
  };
}

/** @returns the 400 for the conversation rules of the module doc, or undefined. */
function checkTurns(messages: readonly unknown[]): Problem | undefined {
  const turns: Array<{ role: 'user' | 'assistant'; blocks: Array<{ block: JsonObject; path: string }> }> = [];
  for (const [i, m] of messages.entries()) {
    const role = field(m, 'role');
    if (role !== 'user' && role !== 'assistant') return { kind: 'bad-request', message: `messages.${i}.role: Input should be 'user' or 'assistant'` };
    const blocks = blocksOf(field(m, 'content')).map((block, j) => ({ block, path: `messages.${i}.content.${j}` }));
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  for (const [t, turn] of turns.entries()) {
    if (turn.role === 'assistant') {
      // The API verifies the signature of every thinking block it receives.
      const forged = turn.blocks.find(
        (b) =>
          b.block['type'] === 'thinking' && !/^sim-thinking-signature-\d+$/.test(Buffer.from(asString(b.block['signature']) ?? '', 'base64').toString('utf8')),
      );
      if (forged !== undefined) return { kind: 'bad-request', message: `${forged.path}: Invalid \`signature\` in \`thinking\` block` };
      continue;
    }
    const previous = turns[t - 1];
    const issued = new Set(
      (previous?.role === 'assistant' ? previous.blocks : []).filter((b) => b.block['type'] === 'tool_use').map((b) => asString(b.block['id'])),
    );
    const orphan = turn.blocks.find(({ block }) => block['type'] === 'tool_result' && !issued.has(asString(block['tool_use_id']) ?? ''));
    if (orphan !== undefined) {
      const id = asString(orphan.block['tool_use_id']) ?? '';
      const message = `${orphan.path}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      return { kind: 'bad-request', message };
    }
  }
  return undefined;
}

/** Models refusing `temperature` with `top_p` (public issue threads quote the error for Opus 4.1, and 4.5 and later). */
const ONE_SAMPLER_ONLY = /^claude-(?:opus-4-1|(?:opus|sonnet|haiku)-4-[5-9]|(?:opus|sonnet|haiku)-[5-9])(?:\b|-)/;

function checkSampling(model: string, body: JsonObject): Problem | undefined {
  if (asNumber(body['temperature']) === undefined || asNumber(body['top_p']) === undefined || !ONE_SAMPLER_ONLY.test(model)) return undefined;
  return { kind: 'bad-request', message: '`temperature` and `top_p` cannot both be specified for this model. Please use only one.' };
}

const STOP_REASONS = { length: 'max_tokens', stop_sequence: 'stop_sequence', tool_calls: 'tool_use', stop: 'end_turn' } as const;

const signature = (call: SimCall): string => Buffer.from(`sim-thinking-signature-${call.seq}`).toString('base64');

/** Anthropic's usage is additive: `input_tokens` excludes the cache read. */
function usage(plan: ReplyPlan, outputTokens: number): JsonObject {
  const read = plan.cachedTokens ?? 0;
  return { input_tokens: plan.promptTokens - read, cache_creation_input_tokens: 0, cache_read_input_tokens: read, output_tokens: outputTokens };
}

/** The `message`; streamed, `message_start` carries it empty. */
function message(call: SimCall, model: string, plan: ReplyPlan, start = false): JsonObject {
  const blocks: JsonObject[] = [];
  if (plan.reasoning) blocks.push({ type: 'thinking', thinking: plan.reasoning, signature: signature(call) });
  if (plan.toolCalls.length === 0) blocks.push({ type: 'text', text: plan.text });
  plan.toolCalls.forEach((c, i) => blocks.push({ type: 'tool_use', id: `toolu_sim${call.seq.toString().padStart(4, '0')}x${i}`, name: c.name, input: c.args }));
  return {
    id: `msg_sim${call.seq}`,
    type: 'message',
    role: 'assistant',
    model,
    content: start ? [] : blocks,
    stop_reason: start ? null : STOP_REASONS[plan.finish],
    stop_sequence: start ? null : (plan.stopSequence ?? null),
    usage: start ? usage(plan, 1) : { ...usage(plan, plan.completionTokens), service_tier: 'standard' },
  };
}

function ev(type: string, payload: JsonObject, content = false): SseEvent {
  return jsonEvent({ type, ...payload }, { event: type, content });
}

/** The event stream of `plan`. */
function anthropicStream(call: SimCall, model: string, plan: ReplyPlan): Reply {
  const events = [ev('message_start', { message: message(call, model, plan, true) })];
  const blocks = message(call, model, plan)['content'] as JsonObject[];
  blocks.forEach((block, index) => {
    const delta = (d: JsonObject, content = true): SseEvent => ev('content_block_delta', { index, delta: d }, content);
    const empty = block['type'] === 'thinking' ? { thinking: '', signature: '' } : block['type'] === 'text' ? { text: '' } : { input: {} };
    events.push(ev('content_block_start', { index, content_block: { ...block, ...empty } }));
    if (index === 0) events.push(ev('ping', {}));
    if (block['type'] === 'thinking') {
      events.push(
        ...splitText(plan.reasoning ?? '').map((piece) => delta({ type: 'thinking_delta', thinking: piece })),
        delta({ type: 'signature_delta', signature: signature(call) }, false),
      );
    } else if (block['type'] === 'text') {
      events.push(...splitText(plan.text).map((piece) => delta({ type: 'text_delta', text: piece })));
    } else {
      // The first input_json_delta is often empty; consumers must cope.
      events.push(
        delta({ type: 'input_json_delta', partial_json: '' }, false),
        ...splitArguments(JSON.stringify(block['input'])).map((frag) => delta({ type: 'input_json_delta', partial_json: frag })),
      );
    }
    events.push(ev('content_block_stop', { index }));
  });
  events.push(
    ev('message_delta', {
      delta: { stop_reason: STOP_REASONS[plan.finish], stop_sequence: plan.stopSequence ?? null },
      usage: usage(plan, plan.completionTokens),
    }),
    ev('message_stop', {}),
  );
  return { kind: 'sse', eol: '\n', headers: { 'request-id': call.requestId }, events, errorEvent: streamErrorEvent('anthropic', call.requestId) };
}
