import { describe, expect, it } from 'vitest';
import { providerSpec } from '../../../functions/shared/providers/registry';

/** Error classification of OpenAI-compatible upstreams (providers.md §1.5, §6). */

describe('OpenAI-compatible errors', () => {
  const adapter = providerSpec('openai').adapter;

  it.each([
    [500, '{"error":{"message":"boom","type":"server_error"}}', 'server', true],
    [429, '{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}', 'rate-limit', true],
    [429, '{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}', 'auth-config', false],
    [401, '{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}', 'auth-config', false],
    [
      400,
      '{"error":{"message":"The model `llama3-70b-8192` has been decommissioned","type":"invalid_request_error","code":"model_decommissioned"}}',
      'not-found',
      false,
    ],
    [
      400,
      '{"error":{"message":"This model\'s maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}',
      'context-length',
      false,
    ],
    [
      400,
      '{"error":{"message":"This model\'s maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}',
      'context-length',
      false,
    ],
    [
      400,
      '{"error":{"message":"prompt is too long: 215000 tokens > 200000 maximum","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}',
      'context-length',
      false,
    ],
    [
      400,
      '[{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]',
      'context-length',
      false,
    ],
    [400, '{"error":{"message":"Invalid \'messages[0].content\'","type":"invalid_request_error","param":"messages"}}', 'client', false],
    [400, '[{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]', 'auth-config', false],
    [503, 'upstream connect error', 'overloaded', true],
  ] as const)('classifies HTTP %i %s as %s', (status, body, kind, retryable) => {
    const f = adapter.classifyError(status, body, new Headers());
    expect(f.kind).toBe(kind);
    expect(f.retryable).toBe(retryable);
    if (kind === 'client') expect(f.clientError?.status).toBe(400);
  });

  it('reads retry-after-ms before retry-after', () => {
    const f = adapter.classifyError(429, '{}', new Headers({ 'retry-after': '3', 'retry-after-ms': '250' }));
    expect(f.retryAfterMs).toBe(250);
    expect(adapter.classifyError(429, '{}', new Headers({ 'retry-after': '2' })).retryAfterMs).toBe(2000);
  });
});
