import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { installAwslambdaGlobals } from '../../local/function-url';
import { captureEmf } from '../support/emf';
import { createTestTables } from '../support/tables';

/**
 * No inbound Host in messages: a keyless request to the real embeddings handler (a fresh module per
 * test, as a new container) gets a 401 whose message names the dashboard only at PUBLIC_BASE_URL, never
 * at the request's Host or X-Forwarded-Host (behind CloudFront that is the Function URL's own host,
 * the door around the WAF). A loopback host (`npm start`) is the one exception. And the account
 * handler flushes its metrics like the gateway's.
 */
const FUNCTION_URL_HOST = 'abcdefghijklmnop.lambda-url.us-east-1.on.aws';
const savedEnv = { ...process.env };

beforeAll(async () => {
  installAwslambdaGlobals();
  await createTestTables('host');
});
beforeEach(() => {
  delete process.env.PUBLIC_BASE_URL;
  delete process.env.ORIGIN_SECRET_ARN;
  vi.resetModules();
});
afterAll(() => {
  process.env = { ...savedEnv };
});

function event(method: string, path: string, headers: Record<string, string>): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers,
    body: method === 'POST' ? JSON.stringify({ model: 'text-embedding-3-small', input: 'hi' }) : undefined,
    requestContext: { http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' } },
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

async function keyless(headers: Record<string, string>): Promise<{ status: number; message: string }> {
  const { reloadConfig } = await import('../../functions/shared/config/env');
  reloadConfig();
  const { handler } = await import('../../functions/embeddings/handler');
  const result = (await handler(event('POST', '/v1/embeddings', { 'content-type': 'application/json', ...headers }))) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode ?? 0, message: (JSON.parse(String(result.body)) as { error: { message: string } }).error.message };
}

describe('messages never echo an inbound Host', () => {
  it('names no host for a Function URL host or a forged X-Forwarded-Host when PUBLIC_BASE_URL is unset', async () => {
    const r = await keyless({ host: FUNCTION_URL_HOST, 'x-forwarded-host': 'phish.example', 'x-forwarded-proto': 'https' });
    expect(r.status).toBe(401);
    expect(r.message).not.toContain('lambda-url');
    expect(r.message).not.toContain('phish.example');
    expect(r.message).toContain('the modelmux dashboard');
  });

  it('names the configured public URL, whatever the Host', async () => {
    process.env.PUBLIC_BASE_URL = 'https://api.example.com/v1';
    const r = await keyless({ host: FUNCTION_URL_HOST });
    expect(r.status).toBe(401);
    expect(r.message).toContain('https://api.example.com/');
    expect(r.message).not.toContain('lambda-url');
  });

  it('names a loopback host (npm start on this machine)', async () => {
    const r = await keyless({ host: '127.0.0.1:8787' });
    expect(r.message).toContain('http://127.0.0.1:8787/');
  });
});

describe('the account function', () => {
  it('flushes its Requests metric at the end of each invocation', async () => {
    // Read when the metric buffer is made (worker-env.ts turns metrics off for other test files).
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const emf = captureEmf();
    try {
      const { handler } = await import('../../functions/account/handler');
      const result = await handler(event('GET', '/v1/account', { host: FUNCTION_URL_HOST }));
      expect(result.statusCode).toBeGreaterThanOrEqual(400);
      const requests = emf.metrics().filter((m) => m.name === 'Requests');
      expect(requests.map((m) => m.values.reduce((a, b) => a + b, 0))).toEqual([1]);
    } finally {
      emf.stop();
    }
  });
});
