import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { installAwslambdaGlobals } from '../../local/function-url';

/**
 * Cold start: each handler module reads the upstream keys while it loads (INIT), against a real HTTP
 * stand-in for Secrets Manager's GetSecretValue reached by the real SDK (`AWS_ENDPOINT_URL_SECRETS_MANAGER`).
 * Every import below is a fresh module instance, as a new Lambda container loads it.
 */

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:modelmux/upstream-keys-AbCdEf';

let server: Server;
let calls = 0;
let answer: 'secret' | 'never' = 'secret';
const savedEnv = { ...process.env };

beforeAll(async () => {
  installAwslambdaGlobals();
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      if (answer === 'never') return; // accepts, never answers: a Secrets Manager that hangs
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ ARN: SECRET_ARN, Name: 'modelmux/upstream-keys', SecretString: '{"OPENAI_API_KEY":"sk-from-secret"}', VersionId: 'v1' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  process.env = { ...savedEnv };
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  calls = 0;
  answer = 'secret';
  process.env.UPSTREAM_SECRET_ARN = SECRET_ARN;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  vi.resetModules();
});

describe('handler cold start', () => {
  it.each([
    ['chat', () => import('../../functions/chat-completions/handler')],
    ['embeddings', () => import('../../functions/embeddings/handler')],
  ] as const)('the %s handler has read the upstream keys once it has loaded, before any request', async (_name, load) => {
    const mod = await load();
    expect(typeof mod.handler).toBe('function');
    expect(calls).toBe(1);
    // The request path then finds them cached: no second GetSecretValue.
    const { loadUpstreamCredentials } = await import('../../functions/shared/config/upstream-credentials');
    expect((await loadUpstreamCredentials()).OPENAI_API_KEY).toBe('sk-from-secret');
    expect(calls).toBe(1);
  });

  it('finishes loading within the prefetch limit when Secrets Manager does not answer', async () => {
    answer = 'never';
    const { CREDENTIALS_PREFETCH_MAX_WAIT_MS } = await import('../../functions/shared/edge/function-url');
    const started = Date.now();
    const mod = await import('../../functions/chat-completions/handler');
    expect(typeof mod.handler).toBe('function');
    expect(Date.now() - started).toBeGreaterThanOrEqual(CREDENTIALS_PREFETCH_MAX_WAIT_MS - 50);
    expect(calls).toBeGreaterThanOrEqual(1);
  });
});
