import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { SECRET_MAX_AGE_MS } from '../../functions/shared/config/secret-json';

/**
 * The loader against a real HTTP stand-in for Secrets Manager's GetSecretValue (JSON 1.1 protocol:
 * `POST /`, `x-amz-target: secretsmanager.GetSecretValue`), reached by the real SDK through
 * `AWS_ENDPOINT_URL_SECRETS_MANAGER`. Each `importLoader()` is a fresh module instance: a new container.
 */

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:modelmux/upstream-keys-AbCdEf';

interface SeenRequest {
  headers: IncomingHttpHeaders;
  body: { SecretId?: string };
}

type Reply = { status: number; body: unknown };

let server: Server;
let seen: SeenRequest[] = [];
let reply: () => Reply = () => secretReply({});

function secretReply(secretString: unknown): Reply {
  return {
    status: 200,
    body: { ARN: SECRET_ARN, Name: 'modelmux/upstream-keys', SecretString: secretString, VersionId: 'v1' },
  };
}

function secretJson(value: unknown): Reply {
  return secretReply(JSON.stringify(value));
}

const savedEnv = { ...process.env };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretId?: string } });
      const { status, body } = reply();
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen = [];
  reply = () => secretJson({});
  for (const name of Object.keys(process.env)) {
    if (/_(API_KEY|BASE_URL)$/.test(name) || name.startsWith('AWS_') || name === 'UPSTREAM_SECRET_ARN') delete process.env[name];
  }
  const { port } = server.address() as AddressInfo;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${port}`;
  process.env.AWS_ACCESS_KEY_ID = 'AKIDTESTTESTTESTTEST';
  process.env.AWS_SECRET_ACCESS_KEY = 'test-secret-access-key';
  process.env.AWS_REGION = 'us-east-1';
});

afterEach(() => {
  vi.useRealTimers();
  process.env = { ...savedEnv };
});

/** The error module of the instance {@link importLoader} loaded last (class identity matters). */
function importErrors(): Promise<typeof import('../../functions/shared/errors/gateway-errors')> {
  return import('../../functions/shared/errors/gateway-errors');
}

/** A fresh module instance, as a new Lambda container would load it. */
async function importLoader(): Promise<typeof import('../../functions/shared/config/upstream-credentials')> {
  vi.resetModules();
  return import('../../functions/shared/config/upstream-credentials');
}

describe('UPSTREAM_ENV_VARS', () => {
  it('lists an API key and a base URL for each provider of the manifest', async () => {
    const { PROVIDER_MANIFEST, UPSTREAM_ENV_VARS } = await import('../../functions/shared/providers/manifest');
    for (const provider of PROVIDER_MANIFEST.map((p) => p.name.toUpperCase())) {
      expect(UPSTREAM_ENV_VARS).toContain(`${provider}_API_KEY`);
      expect(UPSTREAM_ENV_VARS).toContain(`${provider}_BASE_URL`);
    }
    expect(UPSTREAM_ENV_VARS).toHaveLength(2 * PROVIDER_MANIFEST.length);
  });
});

describe('loadUpstreamCredentials', () => {
  it('returns only the known variables from env, blank ones as undefined, without calling Secrets Manager', async () => {
    process.env.OPENAI_API_KEY = 'sk-env-openai';
    process.env.TOGETHER_BASE_URL = 'http://127.0.0.1:9/together';
    process.env.ANTHROPIC_API_KEY = '  ';
    process.env.UNRELATED_API_TOKEN = 'do-not-return';
    const { loadUpstreamCredentials } = await importLoader();

    const creds = await loadUpstreamCredentials();

    expect(creds.OPENAI_API_KEY).toBe('sk-env-openai');
    expect(creds.TOGETHER_BASE_URL).toBe('http://127.0.0.1:9/together');
    expect(creds.ANTHROPIC_API_KEY).toBeUndefined();
    expect(Object.keys(creds)).not.toContain('UNRELATED_API_TOKEN');
    expect(seen).toHaveLength(0);
  });

  it('merges the secret over env: the secret wins, env-only names survive, an empty secret value does not hide env', async () => {
    process.env.OPENAI_API_KEY = 'sk-env-openai';
    process.env.DEEPSEEK_API_KEY = 'sk-env-deepseek';
    process.env.TOGETHER_API_KEY = 'tgp-env-together';
    process.env.OPENAI_BASE_URL = 'https://proxy.example/v1';
    process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
    reply = () => secretJson({ OPENAI_API_KEY: 'sk-secret-openai', ANTHROPIC_API_KEY: 'sk-ant-secret\n', TOGETHER_API_KEY: '' });
    const { loadUpstreamCredentials } = await importLoader();

    const creds = await loadUpstreamCredentials();

    expect(creds).toMatchObject({
      OPENAI_API_KEY: 'sk-secret-openai',
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      DEEPSEEK_API_KEY: 'sk-env-deepseek',
      TOGETHER_API_KEY: 'tgp-env-together',
      OPENAI_BASE_URL: 'https://proxy.example/v1',
    });
    expect(creds.GEMINI_API_KEY).toBeUndefined();
    expect(Object.isFrozen(creds)).toBe(true);
  });

  it("sends one GetSecretValue for the configured ARN, signed for the ARN's region", async () => {
    process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
    process.env.AWS_REGION = 'eu-west-1';
    const { loadUpstreamCredentials } = await importLoader();

    await loadUpstreamCredentials();

    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers['x-amz-target']).toBe('secretsmanager.GetSecretValue');
    expect(seen[0]?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTESTTESTTESTTEST\/\d{8}\/us-east-1\/secretsmanager\//);
    expect(seen[0]?.body).toEqual({ SecretId: SECRET_ARN });
  });

  it('fetches the secret once per container however many callers, and again in a new container', async () => {
    process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
    reply = () => secretJson({ OPENAI_API_KEY: 'sk-1' });
    const first = await importLoader();

    const atInit = first.loadUpstreamCredentials();
    const concurrent = await Promise.all([first.loadUpstreamCredentials(), first.loadUpstreamCredentials(), atInit]);
    const later = await first.loadUpstreamCredentials();

    expect(seen).toHaveLength(1);
    expect(new Set([...concurrent, later]).size).toBe(1);
    expect(later.OPENAI_API_KEY).toBe('sk-1');

    const second = await importLoader();
    await second.loadUpstreamCredentials();
    expect(seen).toHaveLength(2);
  });

  it('fetches again once the max age has passed, so a rotated key is picked up', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
    let version = 1;
    reply = () => secretJson({ OPENAI_API_KEY: `sk-v${version}` });
    const { loadUpstreamCredentials } = await importLoader();

    expect((await loadUpstreamCredentials()).OPENAI_API_KEY).toBe('sk-v1');
    version = 2;
    vi.setSystemTime(Date.now() + SECRET_MAX_AGE_MS - 1_000);
    expect((await loadUpstreamCredentials()).OPENAI_API_KEY).toBe('sk-v1');
    expect(seen).toHaveLength(1);

    vi.setSystemTime(Date.now() + 2_000);
    expect((await loadUpstreamCredentials()).OPENAI_API_KEY).toBe('sk-v2');
    expect(seen).toHaveLength(2);
  });

  it('keeps serving the last good value when a refresh fails, and retries later', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
    reply = () => secretJson({ OPENAI_API_KEY: 'sk-good' });
    const { loadUpstreamCredentials } = await importLoader();
    await loadUpstreamCredentials();

    reply = () => ({ status: 500, body: { __type: 'InternalServiceError', message: 'boom' } });
    vi.setSystemTime(Date.now() + SECRET_MAX_AGE_MS + 1);
    expect((await loadUpstreamCredentials()).OPENAI_API_KEY).toBe('sk-good');
    const failedAttempts = seen.length - 1;
    expect(failedAttempts).toBeGreaterThanOrEqual(1);

    // Within the retry interval: no new request.
    expect((await loadUpstreamCredentials()).OPENAI_API_KEY).toBe('sk-good');
    expect(seen).toHaveLength(1 + failedAttempts);

    reply = () => secretJson({ OPENAI_API_KEY: 'sk-recovered' });
    vi.setSystemTime(Date.now() + 31_000);
    expect((await loadUpstreamCredentials()).OPENAI_API_KEY).toBe('sk-recovered');
  });

  it('rejects with a 503 for the client and a clear cause naming the secret when it does not exist, and tries again on the next call', async () => {
    process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
    reply = () => ({
      status: 400,
      body: { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." },
    });
    const { loadUpstreamCredentials } = await importLoader();
    const { toErrorBody, ConfigUnavailableError } = await importErrors();

    const error = await loadUpstreamCredentials().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigUnavailableError);
    expect(error).toMatchObject({ status: 503, type: 'server_error', code: 'upstream_unavailable' });
    // What the client reads names neither the secret nor anything in it.
    expect(toErrorBody(error).error.message).not.toMatch(/arn:|upstream-keys|ResourceNotFound/);
    // The operator's detail travels as the cause, which the edge logs with the 503.
    expect(causeMessage(error)).toMatch(
      /Cannot read the upstream credentials secret arn:aws:secretsmanager:.*modelmux\/upstream-keys-AbCdEf: ResourceNotFoundException/,
    );

    reply = () => secretJson({ OPENAI_API_KEY: 'sk-created' });
    expect((await loadUpstreamCredentials()).OPENAI_API_KEY).toBe('sk-created');
    expect(seen).toHaveLength(2);
  });

  it.each([
    ['not JSON', secretReply('OPENAI_API_KEY=sk-leak-me'), /is not valid JSON/],
    ['a JSON array', secretJson(['sk-leak-me']), /must be a JSON object .* got an array/],
    ['a JSON string', secretJson('sk-leak-me'), /must be a JSON object .* got a string/],
    ['JSON null', secretJson(null), /must be a JSON object .* got null/],
    ['an object with a non-string value', secretJson({ OPENAI_API_KEY: { key: 'sk-leak-me' } }), /non-string value for OPENAI_API_KEY/],
    ['a binary secret', { status: 200, body: { ARN: SECRET_ARN, Name: 'n', SecretBinary: 'c2stbGVhay1tZQ==', VersionId: 'v1' } }, /has no SecretString/],
  ])('rejects a secret that is %s, without quoting its content', async (_label, secret, message) => {
    process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
    reply = () => secret;
    const { loadUpstreamCredentials } = await importLoader();
    const { toErrorBody, ConfigUnavailableError } = await importErrors();

    const error = await loadUpstreamCredentials().then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(ConfigUnavailableError);
    expect((error as InstanceType<typeof ConfigUnavailableError>).status).toBe(503);
    expect(causeMessage(error)).toMatch(message);
    expect(causeMessage(error)).not.toContain('sk-leak-me');
    expect(JSON.stringify(toErrorBody(error))).not.toContain('sk-leak-me');
  });

  it('turns a Secrets Manager outage into a 503 the openai SDK retries, not a 500', async () => {
    process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
    reply = () => ({ status: 500, body: { __type: 'InternalServiceError', message: 'boom' } });
    const { loadUpstreamCredentials, CREDENTIALS_UNAVAILABLE_MESSAGE } = await importLoader();
    const { asGatewayError, toErrorBody } = await importErrors();

    const error = await loadUpstreamCredentials().then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(asGatewayError(error).status).toBe(503);
    expect(toErrorBody(error)).toEqual({
      error: { message: CREDENTIALS_UNAVAILABLE_MESSAGE, type: 'server_error', param: null, code: 'upstream_unavailable' },
    });
    expect(causeMessage(error)).toMatch(/Cannot read the upstream credentials secret .*InternalServiceError/);
  });
});

/** The message of an error's `cause` (where the operator's detail is kept). */
function causeMessage(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause instanceof Error ? cause.message : '';
}
