/**
 * Conversation rules of the native Anthropic Messages API that the simulator enforces with a 400
 * invalid_request_error (providers.md §2.2–2.3; messages worded as the API's own):
 *
 * - every message's role is `user` or `assistant` (there is no system or tool role, §2.2);
 * - every `tool_result` block answers a `tool_use` block of the previous assistant turn (§2.3:
 *   tool_result in user turns, tool_use in assistant turns);
 * - `temperature` and `top_p` are not both set for the newer models that refuse it (§2.2 ⚠);
 * - a `thinking` block sent back carries the signature the simulator gave it (the API verifies the
 *   signature of every thinking block it receives and refuses a modified one; extended-thinking docs).
 *
 * Consecutive same-role messages are merged first, as the API does (§2.2), so they are not an
 * error: a tool result checks against the merged assistant turn before it.
 */
import { asArray, asNumber, asString, isObject, type JsonObject } from './json-narrowing.js';
import type { Problem } from './types.js';

/**
 * Models read as refusing `temperature` with `top_p` (§2.2 says "some newer models" ⚠; this is the
 * set public issue threads quote the error for: Opus 4.1, and 4.5 and later).
 */
const ONE_SAMPLER_ONLY = /^claude-(?:opus-4-1|(?:opus|sonnet|haiku)-4-[5-9]|(?:opus|sonnet|haiku)-[5-9])(?:\b|-)/;

/** Blocks of a message (`content` as a string is one text block). */
function blocksOf(content: unknown): JsonObject[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return asArray(content).filter(isObject);
}

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
