import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, signUpAndSignIn } from '../support/cognito-user';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `signup-${process.pid}`, cognito: {} });
});

afterAll(async () => {
  await gw?.close();
});

describe('sign-up and the account', () => {
  it('sign-up → confirm → sign-in gives tokens, and the account has 200,000 free tokens', async () => {
    const user = await signUpAndSignIn(gw);
    expect(user.accessToken.split('.')).toHaveLength(3);
    const res = await call(gw, 'GET', '/v1/account', user.accessToken);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: user.sub, email: user.email, free_tokens: 200_000, credit: 0, key_count: 0, key_limit: 5, is_free_tier: true });
  });
});
