import { describe, expect, it } from 'vitest';
import { dispatch } from '../../functions/shared/app/dispatch';
import { inMessagesApi } from '../../functions/shared/app/messages';
import type { GatewayRequest } from '../../functions/shared/http/types';
import { messagesErrorKind } from '../../functions/shared/messages/errors';
import { displayName } from '../../functions/shared/messages/model-list';
import { resolveMessagesModel } from '../../functions/shared/messages/model-names';
import { GatewayError, NotFoundError } from '../../functions/shared/errors/gateway-errors';

const request = (over: Partial<GatewayRequest> = {}): GatewayRequest => ({
  method: 'POST',
  path: '/v1/messages',
  headers: {},
  body: '',
  signal: new AbortController().signal,
  requestId: 'req-1',
  receivedAt: Date.now(),
  ...over,
});

describe('Anthropic error statuses and types', () => {
  it("maps every gateway status to Anthropic's type, 503 to 529 overloaded and other 5xx to 500 api_error", () => {
    expect([400, 401, 402, 403, 404, 405, 413, 429, 500, 502, 503, 504].map((s) => [s, messagesErrorKind(s)])).toEqual([
      [400, { status: 400, type: 'invalid_request_error' }],
      [401, { status: 401, type: 'authentication_error' }],
      [402, { status: 402, type: 'billing_error' }],
      [403, { status: 403, type: 'permission_error' }],
      [404, { status: 404, type: 'not_found_error' }],
      [405, { status: 405, type: 'invalid_request_error' }],
      [413, { status: 413, type: 'request_too_large' }],
      [429, { status: 429, type: 'rate_limit_error' }],
      [500, { status: 500, type: 'api_error' }],
      [502, { status: 500, type: 'api_error' }],
      [503, { status: 529, type: 'overloaded_error' }],
      [504, { status: 504, type: 'timeout_error' }],
    ]);
  });

  it("renders a thrown 429 as rate_limit_error with its retry-after and Anthropic's request-id header", async () => {
    const result = await inMessagesApi(request(), () =>
      Promise.reject(new GatewayError(429, 'requests', 'Too many requests', { headers: { 'retry-after': '7' } })),
    );
    expect(result).toMatchObject({
      kind: 'json',
      status: 429,
      headers: { 'retry-after': '7', 'request-id': 'req-1' },
      body: { type: 'error', error: { type: 'rate_limit_error', message: 'Too many requests' }, request_id: 'req-1' },
    });
  });

  it("hides an internal error's message behind a 500 api_error", async () => {
    const result = await inMessagesApi(request(), () => Promise.reject(new Error('secret detail')));
    expect(result).toMatchObject({ status: 500, body: { type: 'error', error: { type: 'api_error' } } });
    expect(JSON.stringify(result)).not.toContain('secret detail');
  });
});

describe('model names Claude Code and the SDKs send', () => {
  it('resolves dated snapshots and -latest aliases to catalogue ids', () => {
    expect(resolveMessagesModel('claude-sonnet-4-5-20250929')).toBe('claude-sonnet-4-5');
    expect(resolveMessagesModel('claude-haiku-4-5-20251001')).toBe('claude-haiku-4-5');
    expect(resolveMessagesModel('claude-haiku-4-5')).toBe('claude-haiku-4-5');
    expect(resolveMessagesModel('claude-3-5-sonnet-latest')).toBe('claude-3-5-sonnet');
    expect(resolveMessagesModel('claude-3-5-sonnet-20241022')).toBe('claude-3-5-sonnet');
    expect(resolveMessagesModel('gpt-4o')).toBe('gpt-4o');
  });

  it('refuses an unknown name, and an embedding model, with a 404 naming it', () => {
    expect(() => resolveMessagesModel('claude-2.1')).toThrow(NotFoundError);
    expect(() => resolveMessagesModel('claude-2.1')).toThrow(/claude-2\.1/);
    expect(() => resolveMessagesModel('text-embedding-3-small')).toThrow(NotFoundError);
  });

  it('writes display names as Anthropic does', () => {
    expect(displayName('claude-3-5-sonnet')).toBe('Claude 3.5 Sonnet');
    expect(displayName('claude-sonnet-4-5')).toBe('Claude Sonnet 4.5');
    expect(displayName('gpt-4o-mini')).toBe('GPT 4o Mini');
  });
});

describe('the base URL probe', () => {
  it('answers HEAD / and GET / without a key (Claude Code probes its ANTHROPIC_BASE_URL)', async () => {
    for (const method of ['HEAD', 'GET']) expect(await dispatch(request({ method, path: '/' }))).toMatchObject({ kind: 'json', status: 200 });
  });
});
