/** `GET /v1/activity?days=30`: usage by UTC day × model × key, from the ledger. */
import { queryAccountKeys } from '../accounts/keys/api-key-store';
import { accountActivity } from '../billing/ledger';
import type { GatewayRequest, JsonResult } from '../http/types';
import { InvalidRequestError } from '../errors/gateway-errors';
import { MAX_CALLER_ID_BYTES } from '../openai/chat-request';
import type { AccountCaller } from './caller';
import { json, usd } from './json';

/** Days of activity when `days` is absent, and the most a request may ask for. */
export const DEFAULT_ACTIVITY_DAYS = 30;
export const MAX_ACTIVITY_DAYS = 365;

/**
 * `{data:[{date, model, provider_name, key_hash, key_name, requests, prompt_tokens, completion_tokens,
 * usage, usage_nano_usd, byok_requests, cached_tokens, cache_write_tokens, cache_discount,
 * cache_discount_nano_usd, external_users, sessions}]}`, oldest day first. `key_name` is the key's current name (deleted keys
 * included); null for entries recorded without a key. `cached_tokens` / `cache_write_tokens` (OpenRouter's
 * `prompt_tokens_details` names) are the prompt tokens read from / written to the provider's cache, of
 * `prompt_tokens`; `cache_discount` (OpenRouter's name) is what the cache reads saved, in USD, with the
 * exact nano-USD beside it (billing/ledger.ts `cacheReadSavingMilliNano`). `external_users` and
 * `sessions` count the distinct end users (`user`: OpenRouter's `external_user`) and sessions
 * (`session_id`) the group's requests named. `?external_user=` and `?session_id=` count only the
 * requests that named that end user or that session (docs/DATA-MODEL.md §4).
 * @throws InvalidRequestError (400, param `days`) for a `days` outside 1..365; (400, its param) for
 *   an empty or over-long `external_user` or `session_id`.
 */
export async function activityRoute(caller: AccountCaller, req: GatewayRequest): Promise<JsonResult> {
  const query = new URLSearchParams(req.query ?? '');
  const raw = query.get('days');
  const days = raw === null || raw === '' ? DEFAULT_ACTIVITY_DAYS : Number(raw);
  if (!Number.isInteger(days) || days < 1 || days > MAX_ACTIVITY_DAYS) {
    throw new InvalidRequestError(`\`days\` must be a whole number from 1 to ${MAX_ACTIVITY_DAYS}.`, { param: 'days', code: 'invalid_value' });
  }
  const user = callerIdParam(query, 'external_user');
  const sessionId = callerIdParam(query, 'session_id');
  const only = { ...(user !== undefined && { user }), ...(sessionId !== undefined && { sessionId }) };
  const [groups, keys] = await Promise.all([
    accountActivity(caller.accountId, days, Date.now(), caller.account.shards, only),
    queryAccountKeys(caller.accountId),
  ]);
  const names = new Map(keys.map((k) => [k.keyHash, k.name]));
  return json({
    data: groups.map((g) => ({
      date: g.date,
      model: g.model,
      provider_name: g.provider,
      key_hash: g.keyHash === '' ? null : g.keyHash,
      key_name: names.get(g.keyHash) ?? null,
      requests: g.requests,
      prompt_tokens: g.promptTokens,
      completion_tokens: g.completionTokens,
      usage: usd(g.costNanoUsd),
      usage_nano_usd: g.costNanoUsd,
      byok_requests: g.byokRequests,
      cached_tokens: g.cachedTokens,
      cache_write_tokens: g.cacheWriteTokens,
      cache_discount: usd(g.cacheDiscountNanoUsd),
      cache_discount_nano_usd: g.cacheDiscountNanoUsd,
      external_users: g.externalUsers,
      sessions: g.sessions,
    })),
  });
}

/** An end-user or session filter of the query: absent, or 1..MAX_CALLER_ID_BYTES bytes (what the ledger records). */
function callerIdParam(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (value === '' || Buffer.byteLength(value, 'utf8') > MAX_CALLER_ID_BYTES) {
    throw new InvalidRequestError(`\`${name}\` must be 1 to ${MAX_CALLER_ID_BYTES} bytes long.`, { param: name, code: 'invalid_value' });
  }
  return value;
}
