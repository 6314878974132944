/** `GET /v1/activity?days=30`: usage by UTC day × model × key, from the ledger. */
import { queryAccountKeys } from '../accounts/keys/store';
import { accountActivity } from '../billing/ledger';
import type { GatewayRequest, JsonResult } from '../http/types';
import { InvalidRequestError } from '../errors/gateway-errors';
import type { AccountCaller } from './caller';
import { json, usd } from './json';

/** Days of activity when `days` is absent, and the most a request may ask for. */
export const DEFAULT_ACTIVITY_DAYS = 30;
export const MAX_ACTIVITY_DAYS = 365;

/**
 * `{data:[{date, model, provider_name, key_hash, key_name, requests, prompt_tokens, completion_tokens,
 * usage, usage_nano_usd, byok_requests, cached_tokens, cache_write_tokens, cache_discount,
 * cache_discount_nano_usd}]}`, oldest day first. `key_name` is the key's current name (deleted keys
 * included); null for entries recorded without a key. `cached_tokens` / `cache_write_tokens` (OpenRouter's
 * `prompt_tokens_details` names) are the prompt tokens read from / written to the provider's cache, of
 * `prompt_tokens`; `cache_discount` (OpenRouter's name) is what the cache reads saved, in USD, with the
 * exact nano-USD beside it (billing/ledger.ts `cacheReadSavingMilliNano`).
 * @throws InvalidRequestError (400, param `days`) for a `days` outside 1..365.
 */
export async function activityRoute(caller: AccountCaller, req: GatewayRequest): Promise<JsonResult> {
  const raw = new URLSearchParams(req.query ?? '').get('days');
  const days = raw === null || raw === '' ? DEFAULT_ACTIVITY_DAYS : Number(raw);
  if (!Number.isInteger(days) || days < 1 || days > MAX_ACTIVITY_DAYS) {
    throw new InvalidRequestError(`\`days\` must be a whole number from 1 to ${MAX_ACTIVITY_DAYS}.`, { param: 'days', code: 'invalid_value' });
  }
  const [groups, keys] = await Promise.all([accountActivity(caller.accountId, days, Date.now(), caller.account.shards), queryAccountKeys(caller.accountId)]);
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
    })),
  });
}
