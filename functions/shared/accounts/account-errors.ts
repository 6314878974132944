/** Domain errors of accounts and keys: failed DynamoDB conditions become these, never a generic 500. */
import { GatewayError, NotFoundError } from '../errors/gateway-errors';
import { MAX_KEYS_PER_ACCOUNT } from './limits';

/**
 * 409 Conflict: the account already holds {@link MAX_KEYS_PER_ACCOUNT} active keys. 409, not 400,
 * because the request is valid and only the account's current state refuses it (revoking a key makes
 * the same request succeed). OpenAI has no such operation; type `invalid_request_error`,
 * code `key_limit_exceeded`.
 */
export class KeyLimitExceededError extends GatewayError {
  override name = 'KeyLimitExceededError';
  constructor() {
    // The account id is internal (a Cognito sub, or acct_…): never shown to the user.
    super(409, 'invalid_request_error', `Your account already has ${MAX_KEYS_PER_ACCOUNT} active API keys, the most allowed. Delete one to create another.`, {
      code: 'key_limit_exceeded',
    });
  }
}

/** 409 Conflict: an account with this id already exists (create never overwrites balances). */
export class AccountExistsError extends GatewayError {
  override name = 'AccountExistsError';
  constructor(accountId: string) {
    super(409, 'invalid_request_error', `Account ${accountId} already exists.`, { code: 'account_exists' });
  }
}

/** 404: no account with this id. */
export class AccountNotFoundError extends NotFoundError {
  override name = 'AccountNotFoundError';
  constructor(accountId: string) {
    super(`No account ${accountId}.`, { code: 'account_not_found' });
  }
}

/** 404: no active key of this account matches the given hash prefix or hint. */
export class KeyNotFoundError extends NotFoundError {
  override name = 'KeyNotFoundError';
  constructor(accountId: string, ref: string) {
    super(`No API key matching "${ref}" in account ${accountId}.`, { code: 'key_not_found' });
  }
}
