import { boundedCallerId } from '../openai/chat-request';

/** The end user and the session a Messages request's `metadata.user_id` names (chat request fields). */
export interface MetadataCaller {
  /** The end user: the chat request's `user`. */
  user?: string;
  /** The session: the chat request's `session_id` (sticky routing, the ledger entry). */
  session_id?: string;
}

/** Claude Code before 2.1.78: `user_<64 hex>_account_<account uuid, or empty>_session_<session uuid>`. */
const LEGACY_CLAUDE_CODE = /^user_([0-9a-f]+)_account_[0-9a-f-]*_session_([0-9a-f-]+)$/i;

/**
 * The caller named by `metadata.user_id` (Anthropic: "an external identifier for the user who is
 * associated with the request"), as Claude Code fills it (docs/anthropic-messages.md, "What Claude
 * Code and the SDKs send"):
 * - since 2.1.78, a JSON string `{"device_id", "account_uuid", "session_id"}` → user `device_id`
 *   (else `account_uuid`), session `session_id`;
 * - before, `user_<hash>_account_<uuid>_session_<uuid>` → user `<hash>` (the same 64 hex digits as
 *   the newer `device_id`), session the last uuid;
 * - any other string is the end user as sent; null, absent or empty names no one.
 * @throws InvalidRequestError (400, param `metadata.user_id`) when the end user or the session would
 *   be longer than the ledger records (openai/chat-request.ts `boundedCallerId`: 64 bytes).
 */
export function metadataCaller(userId: string | null | undefined): MetadataCaller {
  if (userId == null || userId === '') return {};
  const out = claudeCodeCaller(userId) ?? { user: userId };
  for (const value of [out.user, out.session_id]) if (value !== undefined) boundedCallerId(value, 'metadata.user_id');
  return out;
}

function claudeCodeCaller(userId: string): MetadataCaller | undefined {
  const legacy = LEGACY_CLAUDE_CODE.exec(userId);
  if (legacy !== null) return { user: legacy[1]!, session_id: legacy[2]! };
  if (!userId.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(userId);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const fields = parsed as Record<string, unknown>;
  const text = (k: string): string | undefined => (typeof fields[k] === 'string' && fields[k] !== '' ? fields[k] : undefined);
  const session = text('session_id');
  if (session === undefined) return undefined;
  const user = text('device_id') ?? text('account_uuid');
  return { ...(user !== undefined && { user }), session_id: session };
}
