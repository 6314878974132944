/** Reading an Anthropic Messages request and its turns. */
import { asArray, asNumber, asString, isObject, type JsonObject } from './json-narrowing.js';
import { compactResult, type Conversation, type LastTurn, type ToolDecl } from './reply.js';
import { anthropicStructured, optionalJson } from './structured-output.js';
import type { Problem } from './types.js';

// Reads a native Anthropic Messages request (providers.md §2.2-2.4) into the neutral
// {@link Conversation}, enforcing what the real API rejects with 400 invalid_request_error:
// missing `max_tokens`/`messages`, temperature outside 0..1, thinking budget < 1024 or >= max_tokens,
// and the conversation rules of checkAnthropicTurns (roles, tool_result pairing, temperature with top_p).
export interface AnthropicRequest {
  model: string;
  stream: boolean;
  conversation: Conversation;
}

/** Blocks of a message (`content` as a string is one text block). */
function blocksOf(content: unknown): JsonObject[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return asArray(content).filter(isObject);
}

function toolResultText(block: JsonObject): string {
  const content = block['content'];
  if (typeof content === 'string') return content;
  return blocksOf(content)
    .map((b) => asString(b['text']) ?? '')
    .filter((t) => t !== '')
    .join('\n');
}

function textOf(blocks: readonly JsonObject[]): string {
  return blocks
    .filter((b) => b['type'] === 'text')
    .map((b) => asString(b['text']) ?? '')
    .join('\n');
}

/** Everything countable in a message: text, tool-use inputs, tool results, thinking. */
function messageText(blocks: readonly JsonObject[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b['type'] === 'text') parts.push(asString(b['text']) ?? '');
    else if (b['type'] === 'tool_use') parts.push(`${asString(b['name']) ?? ''} ${JSON.stringify(b['input'] ?? {})}`);
    else if (b['type'] === 'tool_result') parts.push(toolResultText(b));
    else if (b['type'] === 'thinking') parts.push(asString(b['thinking']) ?? '');
  }
  return parts.filter((p) => p !== '').join(' ');
}

function lastTurnOf(messages: readonly JsonObject[]): LastTurn {
  const last = messages[messages.length - 1];
  if (!last || last['role'] !== 'user') return { kind: 'other' };
  const blocks = blocksOf(last['content']);
  const results = blocks.filter((b) => b['type'] === 'tool_result');
  if (results.length > 0) return { kind: 'tool-result', results: results.map((b) => compactResult(toolResultText(b))) };
  return { kind: 'user', text: textOf(blocks), images: blocks.filter((b) => b['type'] === 'image').length };
}

function toolsOf(body: JsonObject): ToolDecl[] {
  // Server tools (web search etc.) have no input_schema; the simulator only calls client tools.
  const tools = asArray(body['tools'])
    .filter(isObject)
    // A deferred tool (`defer_loading`, tool search) is not shown to the model until it is searched for.
    .filter((t) => typeof t['name'] === 'string' && isObject(t['input_schema']) && t['defer_loading'] !== true)
    .map((t) => ({ name: String(t['name']), parameters: t['input_schema'] }));
  const choice = body['tool_choice'];
  if (isObject(choice) && choice['type'] === 'none') return [];
  if (isObject(choice) && choice['type'] === 'tool') return tools.filter((t) => t.name === choice['name']);
  return tools;
}

function systemText(system: unknown): string | undefined {
  if (system === undefined || system === null) return undefined;
  return typeof system === 'string' ? system : textOf(blocksOf(system));
}

/** Validate and read the request; a {@link Problem} means answer 400. */
export function readAnthropicMessages(body: unknown): AnthropicRequest | Problem {
  if (!isObject(body)) return { kind: 'bad-request', message: 'Request body must be a JSON object.' };
  const model = asString(body['model']);
  if (!model) return { kind: 'bad-request', message: 'model: Field required' };
  const maxTokens = asNumber(body['max_tokens']);
  if (maxTokens === undefined) return { kind: 'bad-request', message: 'max_tokens: Field required' };
  if (!Array.isArray(body['messages'])) return { kind: 'bad-request', message: 'messages: Field required' };
  const temperature = asNumber(body['temperature']);
  if (temperature !== undefined && (temperature < 0 || temperature > 1)) {
    return { kind: 'bad-request', message: 'temperature: range: 0..1' };
  }
  const thinking = isObject(body['thinking']) ? body['thinking'] : undefined;
  if (thinking?.['type'] === 'enabled') {
    const budget = asNumber(thinking['budget_tokens']);
    if (budget === undefined || budget < 1024) {
      return { kind: 'bad-request', message: 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024' };
    }
    if (maxTokens <= budget) return { kind: 'bad-request', message: '`max_tokens` must be greater than `thinking.budget_tokens`.' };
  }
  const turnsProblem = checkAnthropicTurns(asArray(body['messages'])) ?? checkSampling(model, body);
  if (turnsProblem !== undefined) return turnsProblem;
  const messages = asArray(body['messages']).filter(isObject);
  const system = systemText(body['system']);
  const lastUser = [...messages].reverse().find((m) => m['role'] === 'user');
  return {
    model,
    stream: body['stream'] === true,
    conversation: {
      messageTexts: [...(system !== undefined ? [system] : []), ...messages.map((m) => messageText(blocksOf(m['content'])))],
      lastTurn: lastTurnOf(messages),
      lastUserText: lastUser ? textOf(blocksOf(lastUser['content'])) : '',
      tools: toolsOf(body),
      maxTokens,
      stop: asArray(body['stop_sequences']).filter((s): s is string => typeof s === 'string'),
      reasoning: thinking?.['type'] === 'enabled' || thinking?.['type'] === 'adaptive',
      ...optionalJson(anthropicStructured(body, system)),
    },
  };
}

// Conversation rules of the native Anthropic Messages API that the simulator enforces with a 400
// invalid_request_error (providers.md §2.2–2.3; messages worded as the API's own):
//
// - every message's role is `user` or `assistant` (there is no system or tool role, §2.2);
// - every `tool_result` block answers a `tool_use` block of the previous assistant turn (§2.3:
//   tool_result in user turns, tool_use in assistant turns);
// - `temperature` and `top_p` are not both set for the newer models that refuse it (§2.2 ⚠);
// - a `thinking` block sent back carries the signature the simulator gave it (the API verifies the
//   signature of every thinking block it receives and refuses a modified one; extended-thinking docs).
//
// Consecutive same-role messages are merged first, as the API does (§2.2), so they are not an
// error: a tool result checks against the merged assistant turn before it.
/**
 * Models read as refusing `temperature` with `top_p` (§2.2 says "some newer models" ⚠; this is the
 * set public issue threads quote the error for: Opus 4.1, and 4.5 and later).
 */
const ONE_SAMPLER_ONLY = /^claude-(?:opus-4-1|(?:opus|sonnet|haiku)-4-[5-9]|(?:opus|sonnet|haiku)-[5-9])(?:\b|-)/;

/** One turn after merging, with where its blocks came from (for error paths). */
interface Turn {
  role: 'user' | 'assistant';
  blocks: Array<{ block: JsonObject; path: string }>;
}

/** @returns the 400 the API would answer for these messages, or undefined when they are valid. */
export function checkAnthropicTurns(messages: readonly unknown[]): Problem | undefined {
  const turns: Turn[] = [];
  for (const [i, m] of messages.entries()) {
    const role = isObject(m) ? m['role'] : undefined;
    if (role !== 'user' && role !== 'assistant') {
      return { kind: 'bad-request', message: `messages.${i}.role: Input should be 'user' or 'assistant'` };
    }
    const blocks = blocksOf(isObject(m) ? m['content'] : undefined).map((block, j) => ({ block, path: `messages.${i}.content.${j}` }));
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  for (const [t, turn] of turns.entries()) {
    if (turn.role !== 'user') {
      const forged = turn.blocks.find((b) => b.block['type'] === 'thinking' && !isSimSignature(asString(b.block['signature']) ?? ''));
      if (forged !== undefined) return { kind: 'bad-request', message: `${forged.path}: Invalid \`signature\` in \`thinking\` block` };
      continue;
    }
    const previous = turns[t - 1];
    const issued = new Set(
      (previous?.role === 'assistant' ? previous.blocks : []).filter((b) => b.block['type'] === 'tool_use').map((b) => asString(b.block['id'])),
    );
    for (const { block, path } of turn.blocks) {
      if (block['type'] !== 'tool_result') continue;
      const id = asString(block['tool_use_id']) ?? '';
      if (!issued.has(id)) {
        return {
          kind: 'bad-request',
          message: `${path}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        };
      }
    }
  }
  return undefined;
}

/** @returns the 400 for `temperature` and `top_p` together on a model that refuses both, else undefined. */
export function checkSampling(model: string, body: JsonObject): Problem | undefined {
  if (asNumber(body['temperature']) === undefined || asNumber(body['top_p']) === undefined) return undefined;
  if (!ONE_SAMPLER_ONLY.test(model)) return undefined;
  return { kind: 'bad-request', message: '`temperature` and `top_p` cannot both be specified for this model. Please use only one.' };
}

/** True for a signature the simulator issued (anthropic-format.ts: base64 of `sim-thinking-signature-<n>`). */
function isSimSignature(signature: string): boolean {
  return /^sim-thinking-signature-\d+$/.test(Buffer.from(signature, 'base64').toString('utf8'));
}
