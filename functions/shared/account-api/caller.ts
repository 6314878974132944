/**
 * Who calls the account API: the Cognito JWT (never an API key) → the verified user → their account,
 * created on the first call (accounts/self-serve-account.ts; its free grant counted against the
 * client's network, account-api/client-address.ts).
 */
import type { Account } from '../accounts/account-store';
import { ensureSelfServeAccount } from '../accounts/self-serve-account';
import { clientAddress } from './client-address';
import type { GatewayRequest } from '../http/types';
import { emailOfAccessToken } from '../identity/user-email';
import { bearerToken, verifyUserToken } from '../identity/verify-token';

/** The signed-in account. */
export interface AccountCaller {
  accountId: string;
  email: string | undefined;
  /** The account as read (or created) by this request. */
  account: Account;
}

/**
 * Authenticates an account-API request.
 * @throws AuthenticationError (401) for a missing token, an API key, or a bad/expired/foreign JWT;
 *         ConfigUnavailableError or StoreUnavailableError (503) when sign-in or the store is unavailable.
 */
export async function accountCaller(req: GatewayRequest): Promise<AccountCaller> {
  const token = bearerToken(req.headers.authorization);
  const user = await verifyUserToken(token);
  const { account } = await ensureSelfServeAccount(user.sub, async () => user.email ?? (await emailOfAccessToken(token)), {
    clientAddress: clientAddress(req),
  });
  return { accountId: user.sub, email: account.email ?? user.email, account };
}
