import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import type { ChunkParts } from '../../functions/shared/openai/chat-response';
import { providerSpec } from '../../functions/shared/providers/registry';
import type { AdapterContext } from '../../functions/shared/providers/types';
import { UpstreamStreamError } from '../../functions/shared/providers/types';
import { decodeSse } from '../../functions/shared/sse/decode';

/**
 * The OpenAI-compatible adapter against fixtures written from the documented wire format
 * (providers.md §1.4, §4.3–4.5, §5.2, §5.4): the body sent upstream, and the full list of chunk
 * parts emitted for a stream fed in awkward byte splits.
 */

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'openai', name));

function ctxFor(model: string, targetIndex = 0): AdapterContext {
  const target = CATALOGUE.get(model)?.targets[targetIndex];
  if (!target) throw new Error(`no target for ${model}`);
  return { target, endpoint: { provider: target.provider, baseUrl: 'http://127.0.0.1:1/base', apiKey: 'upstream-key' } };
}

/** Feeds bytes in pieces of `size`, so lines and multi-byte characters are split. */
async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function runStream(model: string, bytes: Buffer, size: number): Promise<ChunkParts[]> {
  const ctx = ctxFor(model);
  const transform = providerSpec(ctx.target.provider).adapter.createStreamTransform(ctx);
  const out: ChunkParts[] = [];
  for await (const ev of decodeSse(pieces(bytes, size))) out.push(...transform.push(ev));
  out.push(...transform.end());
  return out;
}

const request = (extra: Record<string, unknown> = {}) =>
  chatCompletionRequest.parse({ model: 'x', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('OpenAI-compatible request building', () => {
  it('sends the live upstream id, the default temperature 0.7, and always asks for stream usage', () => {
    const ctx = ctxFor('gpt-4o-mini');
    const built = providerSpec('openai').adapter.buildChatRequest(request({ stream: true }), ctx, true);
    expect(built.url).toBe('http://127.0.0.1:1/base/chat/completions');
    expect(built.headers.authorization).toBe('Bearer upstream-key');
    expect(JSON.parse(built.body)).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.7,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('rewrites max_tokens and drops sampling fields for o-series models', () => {
    const body = JSON.parse(providerSpec('openai').adapter.buildChatRequest(request({ max_tokens: 100, top_p: 0.5 }), ctxFor('o3-mini'), false).body);
    expect(body).toEqual({ model: 'o3-mini', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 100 });
  });

  it('clamps MiniMax temperature into (0, 1] and asks for reasoning apart', () => {
    const body = JSON.parse(providerSpec('minimax').adapter.buildChatRequest(request({ temperature: 0 }), ctxFor('minimax'), false).body);
    expect(body.temperature).toBe(0.01);
    expect(body.reasoning_split).toBe(true);
    expect(body.model).toBe('MiniMax-M2.7');
  });

  it('sends DeepSeek V4 the thinking switch of the catalogue target', () => {
    const r1 = JSON.parse(providerSpec('deepseek').adapter.buildChatRequest(request(), ctxFor('deepseek-r1'), false).body);
    const v3 = JSON.parse(providerSpec('deepseek').adapter.buildChatRequest(request(), ctxFor('deepseek-v3'), false).body);
    expect(r1).toMatchObject({ model: 'deepseek-v4-flash', thinking: { type: 'enabled' } });
    expect(v3).toMatchObject({ model: 'deepseek-v4-flash', thinking: { type: 'disabled' } });
  });

  it('caps max_tokens at the target output limit', () => {
    const body = JSON.parse(providerSpec('openai').adapter.buildChatRequest(request({ max_tokens: 1_000_000 }), ctxFor('gpt-4o'), false).body);
    expect(body.max_tokens).toBe(16_384);
  });
});

describe('OpenAI-compatible streams', () => {
  it.each([1, 3, 7, 64, 4096])('turns a streamed tool call into the same parts whatever the byte split (%i bytes)', async (size) => {
    const parts = await runStream('gpt-4o-mini', fixture('tool-call-stream.sse'), size);
    expect(parts).toEqual([
      { choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, finish_reason: null }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":"Pa' } }] }, finish_reason: null }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'ris"}' } }] }, finish_reason: null }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { choices: [], usage: { prompt_tokens: 50, completion_tokens: 17, total_tokens: 67 } },
    ]);
  });

  it.each([1, 2, 5, 13])('reads DeepSeek CRLF frames, keep-alive comments and UTF-8 split mid-character (%i bytes)', async (size) => {
    const parts = await runStream('deepseek-r1', fixture('deepseek-reasoning-crlf.sse'), size);
    expect(parts).toEqual([
      { choices: [{ index: 0, delta: { role: 'assistant', reasoning_content: 'Hmm, ' }, finish_reason: null }] },
      { choices: [{ index: 0, delta: { content: 'Grüße 🌍 ' }, finish_reason: null }] },
      {
        choices: [{ index: 0, delta: { content: '你好' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 2 } },
      },
    ]);
  });

  it('refuses to treat a stream cut before any finish_reason as complete', async () => {
    await expect(runStream('gpt-4o', fixture('cut-mid-answer.sse'), 16)).rejects.toBeInstanceOf(UpstreamStreamError);
  });

  it('raises a mid-stream data error event as an upstream failure', async () => {
    const err = await runStream('gpt-4o', fixture('error-mid-stream.sse'), 16).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamStreamError);
    expect((err as UpstreamStreamError).failure.retryable).toBe(true);
  });
});

describe('OpenAI-compatible buffered responses and errors', () => {
  const adapter = providerSpec('openai').adapter;

  it('parses a body preceded by DeepSeek keep-alive blank lines', () => {
    const parts = providerSpec('deepseek').adapter.parseChatResponse(
      '\n\n\n{"choices":[{"index":0,"message":{"role":"assistant","content":"ok","reasoning_content":"think"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
      ctxFor('deepseek-r1'),
    );
    expect(parts.choices[0]?.message).toEqual({ role: 'assistant', content: 'ok', reasoning_content: 'think' });
    expect(parts.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  it('treats a MiniMax 200 with base_resp status 1002 as a retryable rate limit', () => {
    const err = (() => {
      try {
        providerSpec('minimax').adapter.parseChatResponse('{"base_resp":{"status_code":1002,"status_msg":"rate limit"}}', ctxFor('minimax'));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(UpstreamStreamError);
    expect((err as UpstreamStreamError).failure).toMatchObject({ kind: 'rate-limit', retryable: true });
  });

  it.each([
    [500, '{"error":{"message":"boom","type":"server_error"}}', 'server', true],
    [429, '{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}', 'rate-limit', true],
    [429, '{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}', 'auth-config', false],
    [401, '{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}', 'auth-config', false],
    [400, '{"error":{"message":"The model `llama3-70b-8192` has been decommissioned","type":"invalid_request_error","code":"model_decommissioned"}}', 'not-found', false],
    [400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}', 'context-length', false],
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
