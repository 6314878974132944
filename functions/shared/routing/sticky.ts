/**
 * Caches kept warm: requests of one conversation go to the target that served it
 * last, for {@link STICKY_IDLE_MS} after its last request, so the provider's prompt cache is hit
 * (OpenRouter's "sticky" routing, keyed the same way: guides/best-practices/prompt-caching.mdx).
 *
 * The conversation is named by, in order: the request's `prompt_cache_key`, else its session id
 * ({@link sessionIdOf}: `session_id`, the `x-session-id` header, Claude Code's
 * `x-claude-code-session-id`, Codex's `session-id` header), else — once it is a conversation, i.e. it carries an assistant or tool turn —
 * a hash of its first system message and first non-system message (a single-turn request without a
 * key is not sticky: it has no earlier turn whose cache it could reuse). The key is scoped to the
 * account and the public model, so no tenant can steer (or observe) another's routing.
 *
 * Best effort, per container: the memory lives in this Lambda container only (a request on another
 * container routes as usual, and warms its own). The sticky attempt moves to the front of the plan —
 * before the model's other targets, its equivalents and any hedge — only while its circuit breaker is
 * closed; when it fails, fallback goes on as usual and the target that answers becomes the sticky one.
 */
import { createHash } from 'node:crypto';
import { boundedCallerId, MAX_CALLER_ID_BYTES, type ChatCompletionRequest } from '../openai/chat-request';
import { messageText } from '../usage/estimate';
import { breakerKey, type Attempt } from './attempt-plan';
import { breaker } from './circuit-breaker';

/** How long a conversation stays on its target after its last request (ms): 10 minutes, OpenRouter's. */
export const STICKY_IDLE_MS = 10 * 60_000;
/** Most conversations remembered per container; the least recently used are forgotten first. */
export const STICKY_MAX_ENTRIES = 10_000;

const memory = new Map<string, { attempt: string; until: number }>();

/**
 * The headers that name a session, in the order read: OpenRouter's `x-session-id` (its body field
 * `session_id` wins over it), and Claude Code's `x-claude-code-session-id`, a UUID per session sent on
 * every request since 2.1.86 (docs/anthropic-messages.md, "What Claude Code and the SDKs send").
 */
export const SESSION_HEADERS = ['x-session-id', 'x-claude-code-session-id'] as const;

/**
 * Codex CLI's thread id, on every request of 0.171.0 (docs/responses-compact.md §2). The name is
 * generic, so another client may send it for its own purposes: a value the ledger cannot record is
 * ignored, not refused.
 */
const CODEX_SESSION_HEADER = 'session-id';

/**
 * The request's session id: its `session_id` (OpenRouter's field; on `/v1/messages` also the session
 * Claude Code puts in `metadata.user_id`, messages/to-chat.ts), else the first of
 * {@link SESSION_HEADERS} present, else Codex's `session-id` header when it is at most 64 bytes;
 * undefined when none is (an empty value counts as absent). It names the conversation for sticky
 * routing and is recorded on the ledger entry.
 * @param headers the request's headers, names lower-case.
 * @throws InvalidRequestError (400, `param` the field or the header) for a `session_id` or one of
 *   {@link SESSION_HEADERS} longer than the ledger records (openai/chat-request.ts `boundedCallerId`).
 */
export function sessionIdOf(body: Pick<ChatCompletionRequest, 'session_id'>, headers: Readonly<Record<string, string | undefined>>): string | undefined {
  if (body.session_id != null && body.session_id !== '') return boundedCallerId(body.session_id, 'session_id');
  for (const name of SESSION_HEADERS) {
    const value = headers[name];
    if (value !== undefined && value !== '') return boundedCallerId(value, name);
  }
  const codex = headers[CODEX_SESSION_HEADER];
  return codex !== undefined && codex !== '' && Buffer.byteLength(codex, 'utf8') <= MAX_CALLER_ID_BYTES ? codex : undefined;
}

/**
 * The conversation key of a request, scoped to `accountId` and the public model (see the module
 * comment); undefined for a single-turn request without a key.
 * @throws InvalidRequestError (400) for an over-long session header ({@link sessionIdOf}).
 */
export function conversationKey(accountId: string, body: ChatCompletionRequest, headers: Readonly<Record<string, string | undefined>>): string | undefined {
  const named = body.prompt_cache_key ?? sessionIdOf(body, headers);
  let id: string;
  if (named != null && named !== '') id = `k:${named}`;
  else if (!body.messages.some((m) => m.role === 'assistant' || m.role === 'tool')) return undefined;
  else {
    const system = body.messages.find((m) => m.role === 'system' || m.role === 'developer');
    const first = body.messages.find((m) => m.role !== 'system' && m.role !== 'developer');
    id = `h:${createHash('sha256')
      .update(JSON.stringify([messageText(system?.content), first?.role, messageText(first?.content)]))
      .digest('base64url')}`;
  }
  return `${accountId}\u0000${body.model}\u0000${id}`;
}

/** The plan with the conversation's sticky attempt first, when it is in the plan and its breaker is closed. */
export function stickyFirst(plan: readonly Attempt[], key: string | undefined, now = Date.now()): readonly Attempt[] {
  if (key === undefined) return plan;
  const seen = memory.get(key);
  if (seen === undefined) return plan;
  if (seen.until <= now) {
    memory.delete(key);
    return plan;
  }
  const i = plan.findIndex((a) => attemptId(a) === seen.attempt);
  if (i <= 0 || breaker.isOpen(breakerKey(plan[i]!))) return plan;
  return [plan[i]!, ...plan.slice(0, i), ...plan.slice(i + 1)];
}

/** Remembers the attempt that answered the conversation, for {@link STICKY_IDLE_MS} from now. */
export function rememberSticky(key: string | undefined, attempt: Attempt, now = Date.now()): void {
  if (key === undefined) return;
  memory.delete(key); // re-inserted last: the Map's order is least recently used first
  memory.set(key, { attempt: attemptId(attempt), until: now + STICKY_IDLE_MS });
  for (const oldest of memory.keys()) {
    if (memory.size <= STICKY_MAX_ENTRIES) break;
    memory.delete(oldest);
  }
}

/** Forgets every conversation (tests). */
export function resetSticky(): void {
  memory.clear();
}

/** One attempt of a plan: its public model, target, and whose key. */
function attemptId(a: Attempt): string {
  return `${a.publicModel}\u0000${breakerKey(a)}`;
}
