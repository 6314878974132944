/**
 * Server-level behaviour: URLs and routing, the HTTP control API the bench uses, the request log, wire-level provider
 * quirks (DeepSeek blank lines and keep-alives, Gemini `\r\n\r\n` framing) and a clean shutdown.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PROVIDER_MANIFEST, PROVIDER_NAMES } from '../../../functions/shared/providers/manifest.js';
import { startSimulator, type Simulator } from '../../../local/simulator/index.js';
import { readSse } from './sse-reader.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

const post = (url: string, body: unknown, headers: Record<string, string> = { authorization: 'Bearer k' }): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const chat = { model: 'm', messages: [{ role: 'user', content: 'hi there' }] };

describe('urls and routing', () => {
  it('exposes one base URL per provider of the manifest: its name, then the path of its real base URL', () => {
    expect(sim.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Object.keys(sim.urls)).toEqual(PROVIDER_NAMES);
    for (const p of PROVIDER_MANIFEST) expect(sim.urls[p.name]).toBe(`${sim.baseUrl}/${p.name}${new URL(p.defaultBaseUrl).pathname.replace(/\/$/, '')}`);
    // e.g. the adapters append `/chat/completions` to OpenAI's `/v1` and `/v1/messages` to Anthropic's bare host.
    expect([sim.urls.openai, sim.urls.anthropic, sim.urls.deepinfra]).toEqual([
      `${sim.baseUrl}/openai/v1`,
      `${sim.baseUrl}/anthropic`,
      `${sim.baseUrl}/deepinfra/v1/openai`,
    ]);
  });

  it("serves only the endpoints the gateway calls: others are the provider's 404", async () => {
    expect((await fetch(`${sim.baseUrl}/nowhere`)).status).toBe(404);
    const gemini = { 'x-goog-api-key': 'k' };
    const anthropic = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' };
    const elsewhere = [
      post(`${sim.urls.openai}/completions`, chat),
      fetch(`${sim.urls.openai}/models`, { headers: { authorization: 'Bearer k' } }),
      post(`${sim.urls.anthropic}/v1/chat/completions`, chat, anthropic),
      fetch(`${sim.urls.anthropic}/v1/models`, { headers: anthropic }),
      post(`${sim.urls.gemini}/openai/chat/completions`, chat, gemini),
      post(`${sim.urls.gemini}/models/gemini-embedding-001:embedContent`, { content: { parts: [{ text: 'a' }] } }, gemini),
      fetch(`${sim.urls.gemini}/models`, { headers: gemini }),
      post(`${sim.urls.deepseek}/v1/chat/completions`, chat),
      post(`${sim.urls.deepseek}/embeddings`, { model: 'deepseek-embed', input: 'x' }),
    ];
    expect((await Promise.all(elsewhere)).map((r) => r.status)).toEqual(elsewhere.map(() => 404));
    // Only a path outside every provider's prefix goes unlogged.
    expect(sim.requests).toHaveLength(elsewhere.length);
  });

  it('rejects a missing key and an invalid JSON body in the provider shape', async () => {
    const noKey = await post(`${sim.urls.openai}/chat/completions`, chat, {});
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { type: 'invalid_request_error', code: null } });
    const bad = await fetch(`${sim.urls.together}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: '{not json' });
    expect(bad.status).toBe(400);
    expect(sim.requests[1]?.body).toBe('{not json');
    const gem = await fetch(`${sim.urls.gemini}/models/gemini-2.5-flash-lite:generateContent`, { method: 'POST', body: '{}' });
    expect(gem.status).toBe(403);
  });
});

describe('wire quirks', () => {
  it('DeepSeek precedes buffered JSON with blank lines and interleaves keep-alive comments in streams', async () => {
    const buffered = await post(`${sim.urls.deepseek}/chat/completions`, chat);
    const text = await buffered.text();
    expect(text.startsWith('\n\n{')).toBe(true);
    expect(JSON.parse(text)).toMatchObject({ object: 'chat.completion' });
    const streamed = await readSse(await post(`${sim.urls.deepseek}/chat/completions`, { ...chat, stream: true }));
    expect(streamed.comments.filter((c) => c.trim() === 'keep-alive').length).toBeGreaterThanOrEqual(2);
    expect(streamed.events[streamed.events.length - 1]?.data).toBe('[DONE]');
  });

  it('Gemini separates stream events with CRLF CRLF and sends no [DONE]', async () => {
    const res = await post(
      `${sim.urls.gemini}/models/gemini-2.5-flash-lite:streamGenerateContent?alt=sse`,
      { contents: [{ parts: [{ text: 'hi' }] }] },
      { 'x-goog-api-key': 'k' },
    );
    const raw = await res.text();
    expect(
      raw
        .split('\r\n\r\n')
        .filter((s) => s !== '')
        .every((s) => s.startsWith('data: {')),
    ).toBe(true);
    expect(raw).not.toContain('[DONE]');
    expect(raw.endsWith('\r\n\r\n')).toBe(true);
  });

  it('accepts snake_case Gemini fields and the ?key= query parameter', async () => {
    const res = await post(
      `${sim.urls.gemini}/models/gemini-2.5-flash-lite:generateContent?key=k`,
      {
        system_instruction: { parts: [{ text: 'terse' }] },
        contents: [{ role: 'user', parts: [{ text: 'hi there' }] }],
        generation_config: { max_output_tokens: 2 },
      },
      {},
    );
    expect(await res.json()).toMatchObject({
      candidates: [{ content: { parts: [{ text: 'Echo: hi' }] }, finishReason: 'MAX_TOKENS' }],
      usageMetadata: { promptTokenCount: 4 + 1 + 4 + 2 },
    });
  });
});

describe('a provider prompt cache on demand ([cached])', () => {
  it("reports 3/4 of the prompt as a cache read in each provider's own usage fields", async () => {
    const text = '[cached] one two three four five six seven';
    const openai = (await (await post(`${sim.urls.openai}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: text }] })).json()) as {
      usage: Record<string, any>;
    };
    const p = openai.usage.prompt_tokens as number;
    expect(openai.usage.prompt_tokens_details.cached_tokens).toBe(Math.floor(p * 0.75));
    const ds = (await (await post(`${sim.urls.deepseek}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: text }] })).text()).trim();
    expect(JSON.parse(ds).usage).toMatchObject({ prompt_cache_hit_tokens: Math.floor(p * 0.75), prompt_cache_miss_tokens: p - Math.floor(p * 0.75) });
    const mm = (await (await post(`${sim.urls.minimax}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: text }] })).json()) as {
      usage: Record<string, any>;
    };
    expect(mm.usage.prompt_tokens_details).toEqual({ cached_tokens: Math.floor(p * 0.75) });
    const anthropic = (await (
      await post(
        `${sim.urls.anthropic}/v1/messages`,
        { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: text }] },
        { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      )
    ).json()) as { usage: Record<string, number> };
    // Additive: input_tokens excludes the read.
    expect(anthropic.usage.cache_read_input_tokens! + anthropic.usage.input_tokens!).toBe(p);
    expect(anthropic.usage.cache_read_input_tokens).toBe(Math.floor(p * 0.75));
    const gemini = (await (
      await post(
        `${sim.urls.gemini}/models/gemini-2.5-flash-lite:generateContent`,
        { contents: [{ role: 'user', parts: [{ text }] }] },
        { 'x-goog-api-key': 'k' },
      )
    ).json()) as { usageMetadata: Record<string, number> };
    expect(gemini.usageMetadata.cachedContentTokenCount).toBe(Math.floor(gemini.usageMetadata.promptTokenCount! * 0.75));
    const plain = (await (await post(`${sim.urls.openai}/chat/completions`, chat)).json()) as { usage: Record<string, any> };
    expect(plain.usage.prompt_tokens_details.cached_tokens).toBe(0);
  });
});

describe('control API (what the bench uses from another process)', () => {
  it('sets the chunk delay and resets over HTTP; anything else is 404', async () => {
    expect((await post(`${sim.baseUrl}/__sim/chunk-delay`, { ms: 40 }, {})).status).toBe(204);
    const started = Date.now();
    const read = await readSse(await post(`${sim.urls.together}/chat/completions`, { ...chat, stream: true }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(40 * (read.events.length - 1) - 5);
    expect((await post(`${sim.baseUrl}/__sim/chunk-delay`, { ms: -1 }, {})).status).toBe(400);
    expect((await post(`${sim.baseUrl}/__sim/chunk-delay`, { ms: 0 }, {})).status).toBe(204);

    sim.setFault({ provider: 'together' }, { kind: 'status', status: 503 });
    expect((await post(`${sim.urls.together}/chat/completions`, chat)).status).toBe(503);
    expect((await post(`${sim.baseUrl}/__sim/reset`, {}, {})).status).toBe(204);
    expect(sim.requests).toHaveLength(0);
    expect((await post(`${sim.urls.together}/chat/completions`, chat)).status).toBe(200);
    expect((await post(`${sim.baseUrl}/__sim/faults`, { fault: { kind: 'hang' } }, {})).status).toBe(404);
  });
});

describe('shutdown', () => {
  it('close() ends hanging, stalled and kept-alive exchanges, frees the port and leaves no sockets', async () => {
    const own = await startSimulator({ chunkDelayMs: 5 });
    own.setFault({ provider: 'openai' }, { kind: 'hang' }, { times: 1 });
    own.setFault({ provider: 'together' }, { kind: 'stall-after-chunks', chunks: 1 });
    own.setFault({ provider: 'deepseek' }, { kind: 'keep-alive', everyMs: 10 });
    const hanging = post(`${own.urls.openai}/chat/completions`, chat).catch((e: unknown) => e);
    const stalled = await post(`${own.urls.together}/chat/completions`, { ...chat, stream: true });
    const stalledBody = stalled.text().catch((e: unknown) => e);
    const keptAlive = await post(`${own.urls.deepseek}/chat/completions`, { ...chat, stream: true });
    const keptAliveBody = keptAlive.text().catch((e: unknown) => e);
    await vi.waitFor(() => expect(own.requests).toHaveLength(3));
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await hanging).toBeInstanceOf(Error);
    expect(await stalledBody).toBeInstanceOf(Error);
    expect(await keptAliveBody).toBeInstanceOf(Error);
    // Shutdown is not the client going away.
    expect(own.requests.map((r) => r.aborted)).toEqual([false, false, false]);
    await expect(fetch(`${own.baseUrl}/openai/v1/models`)).rejects.toThrow();
  });
});
