import { describe, expect, it } from 'vitest';
import { geminiAdapter } from '../../../functions/shared/providers/gemini/adapter';
import { fixtureText } from './helpers';

/** Google RPC error bodies (providers.md §3.5) → the router's verdict. */

const rpc = (code: number, status: string, message: string) => JSON.stringify({ error: { code, message, status } });

describe('Gemini error classification', () => {
  it.each([
    [400, fixtureText('error-api-key-invalid.json'), 'auth-config', false],
    [400, rpc(400, 'INVALID_ARGUMENT', 'API key expired. API key not valid. Please renew the API key.'), 'auth-config', false],
    [400, rpc(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified'), 'client', false],
    [400, fixtureText('error-array-wrapped.json'), 'client', false],
    [400, rpc(400, 'INVALID_ARGUMENT', 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).'), 'context-length', false],
    [400, rpc(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.'), 'auth-config', false],
    [403, rpc(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers."), 'auth-config', false],
    [404, rpc(404, 'NOT_FOUND', 'models/gemini-1.5-pro is not found for API version v1beta, or is not supported for generateContent.'), 'not-found', false],
    [429, fixtureText('error-resource-exhausted.json'), 'rate-limit', true],
    // Our project's prepaid credit depleted (docs/providers.md §10): no retry fixes it, so fall back at once.
    [
      402,
      rpc(402, 'RESOURCE_EXHAUSTED', 'Your prepayment credits are depleted. Please go to AI Studio to manage your project and billing.'),
      'auth-config',
      false,
    ],
    [500, rpc(500, 'INTERNAL', 'An internal error has occurred.'), 'server', true],
    [503, rpc(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'), 'overloaded', true],
    [504, rpc(504, 'DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'), 'timeout', true],
    [502, '<html>Bad Gateway</html>', 'server', true],
    [401, '', 'auth-config', false],
  ] as const)('classifies HTTP %i %s as %s', (status, body, kind, retryable) => {
    const f = geminiAdapter.classifyError(status, body, new Headers());
    expect(f.kind).toBe(kind);
    expect(f.retryable).toBe(retryable);
    expect(f.status).toBe(status);
    if (kind === 'client') expect(f.clientError?.status).toBe(400);
    else expect(f.clientError).toBeUndefined();
  });

  it('passes the upstream message of a bad request on to the client', () => {
    const f = geminiAdapter.classifyError(400, fixtureText('error-array-wrapped.json'), new Headers());
    expect(f.clientError?.message).toBe('Invalid JSON payload received. Unknown name "reasoning": Cannot find field.');
  });

  it('never shows the client an invalid upstream key as its own bad request', () => {
    const f = geminiAdapter.classifyError(400, fixtureText('error-api-key-invalid.json'), new Headers());
    expect(f).toMatchObject({ kind: 'auth-config', retryable: false, status: 400 });
  });

  it('reads the wait from RetryInfo.retryDelay before the retry-after header', () => {
    expect(geminiAdapter.classifyError(429, fixtureText('error-resource-exhausted.json'), new Headers({ 'retry-after': '30' })).retryAfterMs).toBe(12_000);
    const fractional = JSON.stringify({
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        message: 'quota',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' }],
      },
    });
    expect(geminiAdapter.classifyError(429, fractional, new Headers()).retryAfterMs).toBe(1_500);
    expect(geminiAdapter.classifyError(429, rpc(429, 'RESOURCE_EXHAUSTED', 'quota'), new Headers({ 'retry-after': '2' })).retryAfterMs).toBe(2_000);
    expect(geminiAdapter.classifyError(429, rpc(429, 'RESOURCE_EXHAUSTED', 'quota'), new Headers()).retryAfterMs).toBeUndefined();
  });
});
