/**
 * `GET /v1/key` with `Authorization: Bearer sk-mux-…`: what an API user may know about the key they
 * hold, in OpenRouter's shape (`GET /api/v1/key`): `{data:{label, name, usage, usage_nano_usd, limit,
 * limit_nano_usd, limit_remaining, limit_remaining_nano_usd, limit_reset, is_free_tier,
 * rate_limit:{requests, interval, concurrent}}}`. Read strongly consistent: right after a request the
 * usage includes it.
 */
import { getAccount } from '../accounts/account-store';
import { getOwnedKey, readKeyStates } from '../accounts/keys/api-key-store';
import { limitRemainingNanoUsd } from '../accounts/keys/key-account-entry';
import { rateLimitsFor } from '../config/env';
import { NANO_USD_PER_USD } from '../money/money';
import type { GatewayRequest, JsonResult } from '../http/types';
import { AuthenticationError } from '../errors/gateway-errors';
import { authenticateRequest } from './guard';

const usd = (nano: number) => nano / NANO_USD_PER_USD;

/** The caller's key info. @throws AuthenticationError (401) for a bad key; StoreUnavailableError (503). */
export async function keyInfo(req: GatewayRequest): Promise<JsonResult> {
  const caller = await authenticateRequest(req);
  const [item, states, account] = await Promise.all([
    getOwnedKey(caller.accountId, caller.keyHash).catch(() => undefined),
    readKeyStates(caller.accountId, [caller.keyHash]),
    getAccount(caller.accountId, { consistent: true }),
  ]);
  if (item === undefined || account === undefined) throw new AuthenticationError('This API key no longer exists.', 'invalid_api_key');
  const state = states.get(caller.keyHash);
  const limit = item.limitNanoUsd ?? undefined;
  const remaining = limitRemainingNanoUsd(state, limit);
  const used = state?.usedNanoUsd ?? 0;
  const freeTier = (account.purchasedNanoUsd ?? 0) === 0;
  const limits = rateLimitsFor(account.purchasedNanoUsd ?? 0);
  return {
    kind: 'json',
    status: 200,
    headers: { 'cache-control': 'no-store' },
    body: {
      data: {
        label: item.hint,
        name: item.name,
        usage: usd(used),
        usage_nano_usd: used,
        limit: limit === undefined ? null : usd(limit),
        limit_nano_usd: limit ?? null,
        limit_remaining: remaining === undefined ? null : usd(remaining),
        limit_remaining_nano_usd: remaining ?? null,
        limit_reset: limit === undefined ? null : (item.limitReset ?? null),
        is_free_tier: freeTier,
        rate_limit: { requests: limits.rpm || null, interval: '1m', concurrent: limits.concurrent || null },
      },
    },
  };
}
