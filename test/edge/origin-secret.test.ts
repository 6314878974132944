import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { ORIGIN_SECRET_HEADER } from '../../functions/shared/config/stack-contract';
import { installAwslambdaGlobals } from '../../local/function-url';
import { startSecretsManagerStub, type SecretsManagerStub } from '../support/secrets-manager';
import { createTestTables } from '../support/tables';

/**
 * "One door" at the handler edge: with ORIGIN_SECRET_ARN set (the stack sets it when CloudFront is in
 * front), a request without CloudFront's origin header is refused with 403 and OpenAI's error body
 * before anything else runs. The real embeddings handler, a fresh module (a new container) per test,
 * reads the secret from a loopback Secrets Manager stand-in through the real SDK; DynamoDB Local
 * holds the API key.
 */

const ORIGIN_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:Modelmux/origin-secret-AbCdEf';
let secretsManager: SecretsManagerStub;
let apiKey: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  installAwslambdaGlobals();
  secretsManager = await startSecretsManagerStub();
  await createTestTables('origin');
  const account = await createAccount();
  apiKey = (await createKey(account.accountId, 'origin')).key;
});

afterAll(async () => {
  process.env = { ...savedEnv };
  await secretsManager.close();
});

beforeEach(() => {
  secretsManager.secrets.clear();
  secretsManager.requests.length = 0;
  process.env.ORIGIN_SECRET_ARN = ORIGIN_ARN;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = secretsManager.endpoint;
  vi.resetModules();
});

/** A Function URL event (payload 2.0) for `GET path` with these headers. */
function event(path: string, headers: Record<string, string>): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'abc.lambda-url.us-east-1.on.aws', ...headers },
    requestContext: { http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' } },
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

/** A new container: the embeddings handler module loaded afresh (reads the secret at INIT). */
async function newContainer(): Promise<(e: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>> {
  const { handler } = await import('../../functions/embeddings/handler');
  return (e) => handler(e);
}

const models = (originHeader?: string): APIGatewayProxyEventV2 =>
  event('/v1/models', { authorization: `Bearer ${apiKey}`, ...(originHeader === undefined ? {} : { [ORIGIN_SECRET_HEADER]: originHeader }) });

function errorOf(result: APIGatewayProxyStructuredResultV2): { type: string; code: string; message: string } {
  return (JSON.parse(String(result.body)) as { error: { type: string; code: string; message: string } }).error;
}

describe('the origin secret check', () => {
  it('reads the secret during INIT, then answers 403 with an OpenAI error body to a call without the header', async () => {
    secretsManager.secrets.set(ORIGIN_ARN, JSON.stringify({ current: 'cf-current-value' }));
    const invoke = await newContainer();
    expect(secretsManager.requests).toContain(ORIGIN_ARN);
    const asked = secretsManager.requests.length;

    const direct = await invoke(models());
    expect(direct.statusCode).toBe(403);
    expect(direct.headers?.['content-type']).toBe('application/json');
    expect(errorOf(direct)).toMatchObject({ type: 'permission_error', code: 'direct_access_forbidden' });
    expect(errorOf(direct).message).not.toContain('cf-current-value');
    // No Secrets Manager call per request: the value read at INIT is used.
    expect(secretsManager.requests.length).toBe(asked);
  });

  it('answers 200 when the header carries the current value, 403 for any other value', async () => {
    secretsManager.secrets.set(ORIGIN_ARN, JSON.stringify({ current: 'cf-current-value' }));
    const invoke = await newContainer();
    expect((await invoke(models('cf-current-value'))).statusCode).toBe(200);
    expect((await invoke(models('cf-current-valuE'))).statusCode).toBe(403);
    expect((await invoke(models(''))).statusCode).toBe(403);
  });

  it('accepts the previous value too during a rotation, and only those two', async () => {
    secretsManager.secrets.set(ORIGIN_ARN, JSON.stringify({ current: 'cf-new-value', previous: 'cf-old-value' }));
    const invoke = await newContainer();
    expect((await invoke(models('cf-new-value'))).statusCode).toBe(200);
    expect((await invoke(models('cf-old-value'))).statusCode).toBe(200);
    expect((await invoke(models('cf-older-value'))).statusCode).toBe(403);
  });

  it('refuses every request with 503 (fail closed) when the secret cannot be read, never serving unchecked', async () => {
    const invoke = await newContainer(); // no secret stored: ResourceNotFoundException
    const noHeader = await invoke(models());
    const withHeader = await invoke(models('anything'));
    for (const result of [noHeader, withHeader]) {
      expect(result.statusCode).toBe(503);
      expect(errorOf(result).type).toBe('server_error');
    }
  });

  it('is off without ORIGIN_SECRET_ARN (no CloudFront in front): no header needed, no secret read', async () => {
    delete process.env.ORIGIN_SECRET_ARN;
    const invoke = await newContainer();
    expect((await invoke(models())).statusCode).toBe(200);
    expect(secretsManager.requests).not.toContain(ORIGIN_ARN);
  });
});
