import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * The product's promise, end to end: the official `openai` SDK, changed only in base URL and key,
 * talks to the real handlers through the Function URL stand-in, with DynamoDB Local for keys and
 * ledger and the protocol-faithful upstream simulator behind.
 */

const SPEC_MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3', 'deepseek-r1', 'minimax', 'llama-3-70b'];

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  // Room for several 3-choice holds in flight at once (n × the model's output maximum each).
  gw = await startGateway({ tablePrefix: `sdk-${process.pid}`, devFreeTokens: 2_000_000 });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

describe('chat completions through the openai SDK', () => {
  it('returns a buffered chat.completion with the requested model name and usage', async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello to modelmux' }] });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-4o-mini');
    expect(res.choices[0]?.message.role).toBe('assistant');
    expect(res.choices[0]?.message.content).toMatch(/^Echo: Say hello to modelmux/);
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage?.total_tokens).toBe((res.usage?.prompt_tokens ?? 0) + (res.usage?.completion_tokens ?? 0));
    expect(res.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('streams deltas that join into the same reply as the buffered call, ending without a usage chunk by default', async () => {
    const messages = [{ role: 'user' as const, content: 'Stream me something please' }];
    const buffered = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
    let text = '';
    let chunks = 0;
    let finish: string | null = null;
    let sawUsage = false;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.model).toBe('gpt-4o-mini');
      if (chunk.usage) sawUsage = true;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text).toBe(buffered.choices[0]?.message.content);
    expect(finish).toBe('stop');
    expect(sawUsage).toBe(false);
  });

  it('forwards each streamed chunk as the upstream sends it, not in one batch at the end', async () => {
    // The simulator waits 150 ms between events; a gateway that buffered the answer would deliver every
    // delta in the same instant at the end. Arrival times are read as the SDK yields each chunk.
    const gapMs = 150;
    gw.simulator?.setChunkDelay(gapMs);
    try {
      const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'pace me' }], stream: true });
      const arrivals: number[] = [];
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content) arrivals.push(performance.now());
      expect(arrivals.length).toBeGreaterThanOrEqual(5);
      // n content events paced 150 ms apart span (n - 1) × 150 ms upstream; allow half of that for jitter.
      expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThan(((arrivals.length - 1) * gapMs) / 2);
      const spreadOut = arrivals.slice(1).filter((t, i) => t - (arrivals[i] ?? t) > gapMs / 2).length;
      expect(spreadOut).toBeGreaterThanOrEqual(arrivals.length - 2);
    } finally {
      gw.simulator?.setChunkDelay(0);
    }
  });

  it('ends a stream with a usage chunk when stream_options.include_usage is set', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Count my tokens' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.completion_tokens).toBeGreaterThan(0);
    expect(last?.usage?.total_tokens).toBe((last?.usage?.prompt_tokens ?? 0) + (last?.usage?.completion_tokens ?? 0));
    // Every other chunk carries usage: null, as OpenAI sends it.
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it.each(SPEC_MODELS)('answers the spec model %s, buffered and streamed', async (model) => {
    const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `Hello ${model}` }], max_tokens: 50 });
    expect(res.model).toBe(model);
    expect(res.choices[0]?.message.content).toContain(`Echo: Hello ${model}`);
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `Hi ${model}` }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain(`Echo: Hi ${model}`);
  });

  it('returns reasoning_content for deepseek-r1', async () => {
    const res = await client.chat.completions.create({ model: 'deepseek-r1', messages: [{ role: 'user', content: 'Think first' }] });
    const message = res.choices[0]?.message as { reasoning_content?: string } | undefined;
    expect(message?.reasoning_content?.length ?? 0).toBeGreaterThan(0);
  });

  it('tells the client which model and provider served, in headers', async () => {
    const { response } = await client.chat.completions
      .create({ model: 'claude-3-5-sonnet', messages: [{ role: 'user', content: 'who are you' }] })
      .withResponse();
    expect(response.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    expect(response.headers.get('x-modelmux-provider')).toBe('anthropic');
    expect(response.headers.get('x-modelmux-attempts')).toBe('1');
    expect(response.headers.get('x-request-id')).toMatch(/\S+/);
  });
});

describe('embeddings through the openai SDK', () => {
  it('embeds a string with deepseek-embed', async () => {
    const res = await client.embeddings.create({ model: 'deepseek-embed', input: 'hello world' });
    expect(res.object).toBe('list');
    expect(res.model).toBe('deepseek-embed');
    expect(res.data).toHaveLength(1);
    expect(res.data[0]?.index).toBe(0);
    expect(res.data[0]?.embedding.length).toBeGreaterThan(0);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('embeds an array, one vector per input in order', async () => {
    const inputs = ['first text', 'second text', 'third text'];
    const res = await client.embeddings.create({ model: 'deepseek-embed', input: inputs });
    expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
    const single = await client.embeddings.create({ model: 'deepseek-embed', input: 'second text' });
    expect(res.data[1]?.embedding).toEqual(single.data[0]?.embedding);
    expect(res.data[0]?.embedding).not.toEqual(res.data[1]?.embedding);
  });

  it('decodes base64 embeddings the SDK asks for by default into the same floats', async () => {
    const viaBase64 = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'abc', encoding_format: 'base64' });
    const viaFloat = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'abc', encoding_format: 'float' });
    expect(typeof viaBase64.data[0]?.embedding).toBe('string');
    const bytes = Buffer.from(viaBase64.data[0]?.embedding as unknown as string, 'base64');
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(decoded.map((x) => Number(x.toFixed(5)))).toEqual(viaFloat.data[0]?.embedding.map((x) => Number(x.toFixed(5))));
  });
});

describe('models and errors through the openai SDK', () => {
  it('lists every catalogue model with prices as strings', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining([...SPEC_MODELS, 'deepseek-embed']));
    expect(ids.length).toBeGreaterThanOrEqual(30);
    const one = (await client.models.retrieve('gpt-4o')) as unknown as { pricing: { prompt: string }; context_length: number };
    // $2.50 per 1M tokens upstream × 1.055 = $0.0000026375 per token.
    expect(one.pricing.prompt).toBe('0.0000026375');
    expect(one.context_length).toBe(128000);
    expect(one.pricing).not.toHaveProperty('long_context');
    // Gemini 2.5 Pro's long-prompt tier ($2.50 / $15 per 1M upstream, × 1.055) is shown next to its base
    // price, with its cache reads ($0.125 / $0.25 per 1M upstream, docs/prices.md) in OpenRouter's name.
    const pro = (await client.models.retrieve('gemini-2.5-pro')) as unknown as { pricing: Record<string, unknown> };
    expect(pro.pricing).toEqual({
      prompt: '0.00000131875',
      completion: '0.00001055',
      input_cache_read: '0.000000131875',
      long_context: { prompt_tokens_above: 200000, prompt: '0.0000026375', completion: '0.000015825', input_cache_read: '0.00000026375' },
      pricing_valid_until: null,
      pricing_source: '@pydantic/genai-prices 0.1.8 (gemini-2.5-pro)',
    });
  });

  it('raises AuthenticationError for a wrong key', async () => {
    const bad = new OpenAI({ baseURL: gw.baseUrl, apiKey: 'sk-mux-wrongwrongwrongwrongwrongwrongwrongwrongwro', maxRetries: 0 });
    const err = await bad.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    // OpenAI's own 401 body (providers.md §1.5): type invalid_request_error, code invalid_api_key.
    expect(err).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
  });

  it('raises NotFoundError for an unknown model, with code model_not_found', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-9-ultra', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
  });

  it('raises BadRequestError for a body without messages, naming the parameter', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-4o' } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');
  });
});

describe('logprobs, n and SDK-typical bodies through the openai SDK', () => {
  const messages = [{ role: 'user' as const, content: 'Tell me about logprobs' }];

  it('returns logprobs from gpt-4o when asked, buffered and streamed, joining to the content', async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4o', messages, logprobs: true, top_logprobs: 2 });
    const tokens = res.choices[0]?.logprobs?.content ?? [];
    expect(tokens.length).toBe(res.usage?.completion_tokens);
    expect(tokens.map((t) => t.token).join('')).toBe(res.choices[0]?.message.content);
    expect(tokens.every((t) => t.top_logprobs.length === 2 && Array.isArray(t.bytes))).toBe(true);
    expect(res.choices[0]?.logprobs?.refusal).toBeNull();

    const streamed = await client.chat.completions.stream({ model: 'gpt-4o', messages, logprobs: true }).finalChatCompletion();
    expect(streamed.choices[0]?.message.content).toBe(res.choices[0]?.message.content);
    expect(streamed.choices[0]?.logprobs?.content?.map((t) => t.token).join('')).toBe(res.choices[0]?.message.content);

    const plain = await client.chat.completions.create({ model: 'gpt-4o', messages });
    expect(plain.choices[0]?.logprobs).toBeNull();
  });

  it.each(['claude-3-5-sonnet', 'gemini-2.0-flash'])('refuses logprobs for %s with a 400 unsupported_parameter, param logprobs', async (model) => {
    const err = await client.chat.completions.create({ model, messages, logprobs: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'logprobs' });
  });

  it.each(['gpt-4o', 'gemini-2.0-flash'])(
    'returns n choices from %s, buffered and streamed (chunk indexes), usage counting every completion',
    async (model) => {
      const res = await client.chat.completions.create({ model, messages, n: 3 });
      expect(res.choices.map((c) => c.index)).toEqual([0, 1, 2]);
      expect(new Set(res.choices.map((c) => c.message.content)).size).toBe(3);
      const one = await client.chat.completions.create({ model, messages });
      expect(res.usage?.prompt_tokens).toBe(one.usage?.prompt_tokens);
      expect(res.usage?.completion_tokens).toBe(3 * (one.usage?.completion_tokens ?? 0));

      const indexes = new Set<number>();
      const runner = client.chat.completions.stream({ model, messages, n: 3, stream_options: { include_usage: true } });
      runner.on('chunk', (c) => c.choices.forEach((x) => indexes.add(x.index)));
      const final = await runner.finalChatCompletion();
      expect([...indexes].sort()).toEqual([0, 1, 2]);
      expect(final.choices.map((c) => c.message.content)).toEqual(res.choices.map((c) => c.message.content));
      expect(final.choices.every((c) => c.finish_reason === 'stop')).toBe(true);
      expect(final.usage?.completion_tokens).toBe(res.usage?.completion_tokens);
    },
  );

  it.each(['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3'])(
    'answers %s with message.refusal null, as OpenAI types and sends it',
    async (model) => {
      const res = await client.chat.completions.create({ model, messages });
      expect(res.choices[0]?.message.refusal).toBeNull();
      expect(res.choices[0]?.logprobs).toBeNull();
    },
  );

  it('refuses n > 1 for claude-3-5-sonnet with a 400 unsupported_parameter, param n', async () => {
    const err = await client.chat.completions.create({ model: 'claude-3-5-sonnet', messages, n: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ code: 'unsupported_parameter', param: 'n' });
    const stream = await client.chat.completions.create({ model: 'claude-3-5-sonnet', messages, n: 2, stream: true }).catch((e: unknown) => e);
    expect(stream).toMatchObject({ status: 400, param: 'n' });
  });

  it('accepts null-valued optional fields, stop as a string or an array, developer messages and content parts', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Hello parts' }] },
      ],
      temperature: null,
      top_p: null,
      n: null,
      seed: 7,
      user: 'user-1',
      safety_identifier: null,
      prompt_cache_key: null,
      max_completion_tokens: 50,
      stop: 'NEVER',
      logprobs: null,
      top_logprobs: null,
      presence_penalty: null,
      frequency_penalty: null,
      metadata: null,
      store: null,
    });
    expect(res.choices[0]?.message.content).toMatch(/^Echo: Hello parts/);
    const arrayStop = await client.chat.completions.create({ model: 'claude-3-5-sonnet', messages, stop: ['NEVER', 'NOPE'], temperature: null });
    expect(arrayStop.choices[0]?.finish_reason).toBe('stop');
  });

  it("passes OpenAI's custom tools to gpt-4o and refuses them for Claude with a 400 naming the field", async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'custom', custom: { name: 'run_sql', description: 'Run SQL', format: { type: 'text' } } }];
    const ok = await client.chat.completions.create({ model: 'gpt-4o', messages, tools, tool_choice: 'auto' });
    expect(ok.choices).toHaveLength(1);
    const err = await client.chat.completions.create({ model: 'claude-3-5-sonnet', messages, tools }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ code: 'unsupported_parameter', param: 'tools[0].type' });
    const allowed = await client.chat.completions
      .create({
        model: 'gemini-2.0-flash',
        messages,
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'f' } }] } },
      })
      .catch((e: unknown) => e);
    expect(allowed).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'tool_choice' });
  });
});

describe('upstream credentials through the openai SDK', () => {
  it('answers 503 (InternalServerError, retryable), naming no secret, when the credentials secret cannot be read', async () => {
    // A Secrets Manager stand-in that refuses every read (JSON 1.1 protocol error body).
    const denied = createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ __type: 'AccessDeniedException', message: 'User is not authorized to perform secretsmanager:GetSecretValue' }));
    });
    await new Promise<void>((resolve) => denied.listen(0, '127.0.0.1', resolve));
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:modelmux/upstream-keys-XyZ123';
    process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${(denied.address() as AddressInfo).port}`;
    process.env.UPSTREAM_SECRET_ARN = arn;
    try {
      const err = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect(err).toMatchObject({ status: 503, type: 'server_error', code: 'upstream_unavailable' });
      expect((err as Error).message).not.toMatch(/arn:|upstream-keys|AccessDenied|123456789012/);
    } finally {
      delete process.env.UPSTREAM_SECRET_ARN;
      delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
      await new Promise<void>((resolve) => denied.close(() => resolve()));
    }
    // Without the secret the keys come from env again: the gateway answers.
    const ok = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    expect(ok.choices).toHaveLength(1);
  });
});

describe('raw HTTP edge cases', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(gw.baseUrl + path, { method: 'POST', body, headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json', ...headers } });

  it('answers 400 invalid_json for a body that is not JSON', async () => {
    const res = await post('/chat/completions', '{"model": "gpt-4o",');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as { error: { type: string; code: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('answers 405 with allow for GET on the chat path', async () => {
    const res = await fetch(gw.baseUrl + '/chat/completions', { headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('answers 401 with OpenAI wording when the key is missing', async () => {
    const res = await fetch(gw.baseUrl + '/models');
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/didn't provide an API key/);
  });

  it('answers 404, not 500, for a malformed percent-encoded model id', async () => {
    const res = await fetch(gw.baseUrl + '/models/%E0%A4%A', { headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(res.status).toBe(404);
  });

  it('answers 404 for an unknown path', async () => {
    const res = await post('/completions', '{}');
    expect(res.status).toBe(404);
  });
});
