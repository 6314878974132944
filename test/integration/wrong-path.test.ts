import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * A client that forgets `/v1` or uses the wrong method, through `npm start`'s whole gateway (site and
 * functions on one port) with the official openai and Anthropic SDKs and plain fetch: each gets a JSON
 * error in its own API's shape that names the base URL (`<origin>/v1`), never text/plain.
 */

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `wrongpath-${process.pid}` });
});
afterAll(async () => {
  await gw?.close();
});

describe('wrong path or method', () => {
  it('POST /chat/completions without /v1 is an OpenAI 404 naming the base URL (openai SDK)', async () => {
    const client = new OpenAI({ baseURL: gw.origin, apiKey: gw.apiKey, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('unknown_url');
    expect((err as Error).message).toContain(`${gw.origin}/v1/chat/completions`);
  });

  it('POST on a site path is a JSON 405 with allow, naming the base URL', async () => {
    const res = await fetch(`${gw.origin}/somewhere`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('method_not_allowed');
    expect(body.error.message).toContain(`${gw.origin}/v1`);
  });

  it('GET /v1/chat/completions is an OpenAI 405 with allow: POST, naming the base URL', async () => {
    const res = await fetch(`${gw.baseUrl}/chat/completions`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const body = (await res.json()) as { error: { code: string; message: string; type: string } };
    expect(body.error).toMatchObject({ code: 'method_not_allowed', type: 'invalid_request_error' });
    expect(body.error.message).toContain(`${gw.origin}/v1`);
  });

  it("Anthropic's error shape on /messages paths: without /v1 (Anthropic SDK) and GET /v1/messages", async () => {
    // The Anthropic SDK appends /v1/messages to its base URL: a base URL of `<origin>/x` reaches a site path.
    const client = new Anthropic({ baseURL: `${gw.origin}/x`, apiKey: gw.apiKey, maxRetries: 0 });
    const err = await client.messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(405);
    const missing = await fetch(`${gw.origin}/messages`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const get = await fetch(`${gw.baseUrl}/messages`, { headers: { 'x-api-key': gw.apiKey } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const body = (await get.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.message).toContain(`${gw.origin}/v1`);
  });
});
