/**
 * Reads a native Anthropic Messages request (providers.md §2.2-2.4) into the neutral
 * {@link Conversation}, enforcing what the real API rejects with 400 invalid_request_error:
 * missing `max_tokens`/`messages`, temperature outside 0..1, thinking budget < 1024 or >= max_tokens,
 * and the conversation rules of anthropic-turns.ts (roles, tool_result pairing, temperature with top_p).
 */
import { checkAnthropicTurns, checkSampling } from './anthropic-turns.js';
import { asArray, asNumber, asString, isObject, type JsonObject } from './json-narrowing.js';
import { compactResult, type Conversation, type LastTurn, type ToolDecl } from './reply.js';
import { anthropicStructured, optionalJson } from './structured-output.js';
import type { Problem } from './types.js';

export interface AnthropicRequest {
  model: string;
  stream: boolean;
  conversation: Conversation;
}

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
