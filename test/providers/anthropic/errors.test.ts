import { describe, expect, it } from 'vitest';
import { anthropicAdapter } from '../../../functions/shared/providers/anthropic/adapter';

/** Anthropic error bodies (providers.md §2.7) → failure verdicts for the router. */

const body = (type: string, message: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'error', error: { type, message, ...extra }, request_id: 'req_011' });

describe('Anthropic error classification', () => {
  it.each([
    [400, body('invalid_request_error', 'messages: text content blocks must be non-empty'), 'client', false],
    [400, body('invalid_request_error', 'prompt is too long: 215000 tokens > 200000 maximum'), 'context-length', false],
    [400, body('invalid_request_error', 'input length and `max_tokens` exceed context limit: 188000 + 21333 > 200000'), 'context-length', false],
    [
      400,
      body('invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'),
      'auth-config',
      false,
    ],
    [
      400,
      body('invalid_request_error', 'You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC.'),
      'auth-config',
      false,
    ],
    [401, body('authentication_error', 'invalid x-api-key'), 'auth-config', false],
    [402, body('billing_error', 'Billing issue'), 'auth-config', false],
    [403, body('permission_error', 'Your API key does not have permission to use the specified resource.'), 'auth-config', false],
    [404, body('not_found_error', 'model: claude-3-5-sonnet-20241022'), 'not-found', false],
    [409, body('conflict_error', 'Conflict'), 'server', true],
    [413, body('request_too_large', 'Request exceeds the maximum allowed number of bytes.'), 'client', false],
    [429, body('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'), 'rate-limit', true],
    [429, body('rate_limit_error', 'Monthly spend limit reached.', { details: { error_code: 'enforced_spend_limit_reached' } }), 'auth-config', false],
    [500, body('api_error', 'Internal server error'), 'server', true],
    [504, body('timeout_error', 'Request timed out'), 'timeout', true],
    [529, body('overloaded_error', 'Overloaded'), 'overloaded', true],
    [502, '<html>Bad Gateway</html>', 'server', true],
    [503, 'upstream connect error', 'overloaded', true],
  ] as const)('classifies HTTP %i %s as %s', (status, text, kind, retryable) => {
    const f = anthropicAdapter.classifyError(status, text, new Headers());
    expect(f.kind).toBe(kind);
    expect(f.retryable).toBe(retryable);
    expect(f.status).toBe(status);
  });

  it('passes the upstream wording of a client error on as an OpenAI 400', () => {
    const f = anthropicAdapter.classifyError(413, body('request_too_large', 'Request exceeds the maximum allowed number of bytes.'), new Headers());
    expect(f.clientError).toMatchObject({ status: 400, type: 'invalid_request_error', message: 'Request exceeds the maximum allowed number of bytes.' });
    const bad = anthropicAdapter.classifyError(400, body('invalid_request_error', 'messages.0.content: Field required'), new Headers());
    expect(bad.clientError).toMatchObject({ status: 400, message: 'messages.0.content: Field required' });
  });

  it('gives no client error for failures the client did not cause', () => {
    expect(anthropicAdapter.classifyError(529, body('overloaded_error', 'Overloaded'), new Headers()).clientError).toBeUndefined();
  });

  it('honours retry-after on a rate limit and retry-after-ms before it', () => {
    const limited = body('rate_limit_error', 'slow down');
    expect(anthropicAdapter.classifyError(429, limited, new Headers({ 'retry-after': '7' })).retryAfterMs).toBe(7000);
    expect(anthropicAdapter.classifyError(429, limited, new Headers({ 'retry-after': '7', 'retry-after-ms': '1500' })).retryAfterMs).toBe(1500);
    expect(anthropicAdapter.classifyError(429, limited, new Headers()).retryAfterMs).toBeUndefined();
  });
});
