import { GatewayError } from '../errors/gateway-errors';
import { logger } from '../observability/logger';
import type { UpstreamFailure } from '../providers/types';
import type { Attempt } from './attempt-plan';

/**
 * The error a user hears when the provider refused the key they attached (BYOK): 401 — or 403 when the
 * provider said 403 (a key without access) — naming the provider and the key's last 4 characters, and
 * where to fix it. Code `byok_key_invalid`. Logged at warn level (it is the user's key, not ours: no
 * operator action), never with the key.
 */
export function byokKeyRefused(attempt: Attempt, byok: NonNullable<Attempt['byok']>, failure: UpstreamFailure, requestId: string | undefined): GatewayError {
  const provider = attempt.target.provider;
  logger.warn('upstream refused the account’s own key', { requestId, target: attempt.target.key, status: failure.status, accountId: byok.accountId });
  const status = failure.status === 403 ? 403 : 401;
  const where = byok.dashboard.startsWith('http') ? `the dashboard at ${byok.dashboard}` : byok.dashboard;
  return new GatewayError(
    status,
    status === 403 ? 'permission_error' : 'invalid_request_error',
    `Your own ${provider} API key (ending in ${byok.last4}) was refused by ${provider} (HTTP ${failure.status || 'error'}). ` +
      `Replace or remove it in ${where}, or allow modelmux's key as a fallback for ${provider}.`,
    { code: 'byok_key_invalid' },
  );
}
