/**
 * The official `openai` SDK pointed at the simulator: every OpenAI-shaped host must parse as the SDK
 * expects (content types, SSE framing, [DONE], usage chunk, tool-call deltas, error shapes).
 */
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { embed, startSimulator, type Simulator } from '../../../local/simulator/index.js';
import type { ProviderName } from '../../../functions/shared/providers/manifest.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

const client = (provider: ProviderName, apiKey = 'sk-test'): OpenAI => new OpenAI({ apiKey, baseURL: sim.urls[provider], maxRetries: 0 });

const PROMPT = 'Hello simulator, how are you today?';
/** 12 words: `Echo:` + the 6 prompt words + 5 filler words. */
const EXPECTED = 'Echo: Hello simulator, how are you today? alpha beta gamma delta epsilon';

const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' }, metric: { type: 'boolean' }, note: { type: 'string' } },
      required: ['city', 'days', 'metric'],
    },
  },
};

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

function joinedContent(chunks: readonly ChatCompletionChunk[]): string {
  return chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
}

describe('openai SDK against the openai route', () => {
  it('returns a buffered completion with the echo reply, a -sim snapshot model and word-count usage', async () => {
    const res = await client('openai').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-4o-mini-sim');
    expect(res.choices[0]?.message.content).toBe(EXPECTED);
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 4 + 6, completion_tokens: 12, total_tokens: 22 });
    expect(res._request_id).toMatch(/^req_sim_/);
    expect(sim.requests[0]).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', stream: false, completed: true, aborted: false });
    expect(sim.requests[0]?.headers['authorization']).toBe('Bearer sk-test');
  });

  it('streams deltas that join to the buffered text, with a final usage chunk when include_usage is set', async () => {
    const stream = await client('openai').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: PROMPT },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = await collect(stream);
    expect(joinedContent(chunks)).toBe(EXPECTED);
    expect(chunks.length).toBeGreaterThan(6);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 4 + 2 + 4 + 6, completion_tokens: 12 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks[chunks.length - 2]?.choices[0]?.finish_reason).toBe('stop');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('omits the usage chunk and usage fields without include_usage', async () => {
    const chunks = await collect(
      await client('openai').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    );
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('round-trips a streamed tool call whose argument fragments join into schema-valid JSON', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const chunks = await collect(await client('openai').chat.completions.create({ model: 'gpt-4o', messages, tools: [weatherTool], stream: true }));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    const id = deltas[0]!.id!;
    const args = deltas.map((d) => d.function?.arguments ?? '').join('');
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(JSON.parse(args)).toEqual({ city: 'Paris', days: 1, metric: true });
    expect(chunks[chunks.length - 1]?.choices[0]?.finish_reason).toBe('tool_calls');

    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: args } }] });
    messages.push({ role: 'tool', tool_call_id: id, content: '{ "temp_c": 21 }' });
    const res = await client('openai').chat.completions.create({ model: 'gpt-4o', messages, tools: [weatherTool] });
    expect(res.choices[0]?.message.content).toBe('Tool said: {"temp_c":21}');
    expect(res.choices[0]?.finish_reason).toBe('stop');
  });

  it('makes one call per tool (max 3) when the user asks for [parallel]', async () => {
    const other = (name: string): ChatCompletionTool => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } });
    const res = await client('openai').chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'do all [parallel]' }],
      tools: [weatherTool, other('a'), other('b'), other('c')],
    });
    const calls = res.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === 'function' ? c.function.name : ''))).toEqual(['get_weather', 'a', 'b']);
    expect(res.choices[0]?.message.content).toBeNull();
    expect(res.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('returns deterministic unit-vector embeddings for a string and an array (SDK base64 default and float)', async () => {
    const one = await client('openai').embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' });
    expect(one.data).toHaveLength(1);
    expect(one.data[0]?.embedding).toEqual(embed('hello world', 1536)); // the model's own length
    expect(Math.hypot(...one.data[0]!.embedding)).toBeCloseTo(1, 5);
    expect(one.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    expect((sim.requests[0]?.body as { encoding_format?: string }).encoding_format).toBe('base64');

    const many = await client('openai').embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b c'], encoding_format: 'float', dimensions: 16 });
    expect(many.data.map((d) => d.index)).toEqual([0, 1]);
    expect(many.data[1]?.embedding).toHaveLength(16);
    expect(many.data[1]?.embedding).toEqual(embed('b c', 16));
    expect(many.usage.prompt_tokens).toBe(3);
  });

  it('answers image input with "I see N images."', async () => {
    const res = await client('openai').chat.completions.create({
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'image_url', image_url: { url: 'https://example.com/x.png' } },
          ],
        },
      ],
    });
    expect(res.choices[0]?.message.content).toMatch(/^I see 2 images\. Echo: what is this /);
  });

  it('honours stop sequences and max_tokens with the OpenAI finish reasons', async () => {
    const stopped = await client('openai').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }], stop: ['alpha'] });
    expect(stopped.choices[0]?.message.content).toBe('Echo: Hello simulator, how are you today? ');
    expect(stopped.choices[0]?.finish_reason).toBe('stop');
    const cut = await client('openai').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }], max_completion_tokens: 3 });
    expect(cut.choices[0]?.message.content).toBe('Echo: Hello simulator,');
    expect(cut.choices[0]?.finish_reason).toBe('length');
    expect(cut.usage?.completion_tokens).toBe(3);
  });

  it('refuses what OpenAI refuses per model family with 400 unsupported_parameter (providers.md §1.9)', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'x' }];
    await expect(client('openai').chat.completions.create({ model: 'gpt-4o', messages, reasoning_effort: 'low' })).rejects.toMatchObject({
      status: 400,
      code: 'unsupported_parameter',
      param: 'reasoning_effort',
    });
    await expect(client('openai').chat.completions.create({ model: 'o3-mini', messages, max_tokens: 5 })).rejects.toMatchObject({
      status: 400,
      code: 'unsupported_parameter',
      param: 'max_tokens',
    });
    await expect(client('openai').chat.completions.create({ model: 'o3-mini', messages, temperature: 0.2 })).rejects.toMatchObject({
      status: 400,
      code: 'unsupported_parameter',
      param: 'temperature',
    });
    const ok = await client('openai').chat.completions.create({ model: 'o3-mini', messages, reasoning_effort: 'high', max_completion_tokens: 50 });
    expect(ok.choices[0]?.finish_reason).toBe('stop');
    // The compatible hosts have their own rules: DeepSeek takes reasoning_effort (V4 thinking switch, §4.2).
    await expect(client('deepseek').chat.completions.create({ model: 'deepseek-v4-flash', messages, reasoning_effort: 'high' })).resolves.toBeDefined();
  });

  it('raises the SDK error classes for a bad key and a retired model', async () => {
    await expect(client('openai', 'bad-key').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
    await expect(client('openai').chat.completions.create({ model: 'gpt-4-retired', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    await expect(client('deepseek').chat.completions.create({ model: 'deepseek-chat', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('Model Not Exist'),
    });
  });
});

describe('openai SDK against the OpenAI-compatible hosts', () => {
  /** DeepSeek V4 thinking mode (deepseek-reasoner is retired, providers.md §4.2): `thinking` switches it on. */
  const thinkingParams = (stream: boolean) => ({
    model: 'deepseek-v4-flash',
    messages: [{ role: 'user' as const, content: PROMPT }],
    thinking: { type: 'enabled' },
    stream,
  });

  it('deepseek thinking mode: reasoning_content in the message and as deltas before content, cache usage fields', async () => {
    const res = await client('deepseek').chat.completions.create(thinkingParams(false) as ChatCompletionCreateParamsNonStreaming);
    const message = res.choices[0]!.message as (typeof res.choices)[0]['message'] & { reasoning_content?: string };
    expect(message.content).toBe(EXPECTED);
    expect(message.reasoning_content).toMatch(/^Thinking: /);
    expect(res.usage).toMatchObject({
      prompt_cache_hit_tokens: 0,
      prompt_cache_miss_tokens: 10,
      completion_tokens_details: { reasoning_tokens: expect.any(Number) },
    });

    const chunks = await collect(await client('deepseek').chat.completions.create(thinkingParams(true) as ChatCompletionCreateParamsStreaming));
    const kinds = chunks.map((c) => {
      const d = c.choices[0]?.delta as (ChatCompletionChunk['choices'][0]['delta'] & { reasoning_content?: string | null }) | undefined;
      return d?.reasoning_content ? 'r' : d?.content ? 'c' : '-';
    });
    const firstContent = kinds.indexOf('c');
    expect(kinds.lastIndexOf('r')).toBeLessThan(firstContent);
    expect(joinedContent(chunks)).toBe(EXPECTED);
  });

  it('deepseek V4 thinks only when asked with thinking: {type: "enabled"}', async () => {
    const plain = await client('deepseek').chat.completions.create({ model: 'deepseek-v4-flash', messages: [{ role: 'user', content: 'hi' }] });
    expect(plain.choices[0]?.message).not.toHaveProperty('reasoning_content');
    const params: ChatCompletionCreateParamsNonStreaming & { thinking: { type: string } } = {
      model: 'deepseek-v4-flash',
      messages: [{ role: 'user', content: 'hi' }],
      thinking: { type: 'enabled' },
    };
    const thinking = await client('deepseek').chat.completions.create(params);
    expect(thinking.choices[0]?.message).toHaveProperty('reasoning_content');
  });

  it('minimax: <think> inline by default, reasoning_details with reasoning_split, base_resp present', async () => {
    const inline = await client('minimax').chat.completions.create({ model: 'MiniMax-M2', messages: [{ role: 'user', content: PROMPT }] });
    expect(inline.choices[0]?.message.content).toMatch(new RegExp(`^<think>\\nThinking: .*\\n</think>\\n\\n${EXPECTED.replace(/[?]/g, '\\?')}$`));
    expect(inline).toMatchObject({ base_resp: { status_code: 0, status_msg: '' } });

    const params: ChatCompletionCreateParamsNonStreaming & { reasoning_split: boolean } = {
      model: 'MiniMax-M2',
      messages: [{ role: 'user', content: PROMPT }],
      reasoning_split: true,
    };
    const split = await client('minimax').chat.completions.create(params);
    expect(split.choices[0]?.message.content).toBe(EXPECTED);
    expect(split.choices[0]?.message).toMatchObject({
      reasoning_details: [{ type: 'reasoning.text', format: 'MiniMax-response-v1', index: 0, text: expect.stringMatching(/^Thinking/) }],
    });

    const streamed = await collect(
      await client('minimax').chat.completions.create({ model: 'MiniMax-M2', messages: [{ role: 'user', content: PROMPT }], stream: true }),
    );
    expect(joinedContent(streamed)).toBe(inline.choices[0]?.message.content);
  });

  it('minimax rejects temperature 0 with 400', async () => {
    await expect(
      client('minimax').chat.completions.create({ model: 'MiniMax-M2', messages: [{ role: 'user', content: 'x' }], temperature: 0 }),
    ).rejects.toMatchObject({ status: 400, param: 'temperature' });
  });

  it.each<ProviderName>(['together', 'deepinfra'])('%s: buffered and streamed chat agree', async (provider) => {
    const model = 'some-model';
    const res = await client(provider).chat.completions.create({ model, messages: [{ role: 'user', content: PROMPT }] });
    expect(res.choices[0]?.message.content).toBe(EXPECTED);
    expect(res.model).toBe(model);
    const chunks = await collect(
      await client(provider).chat.completions.create({
        model,
        messages: [{ role: 'user', content: PROMPT }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(joinedContent(chunks)).toBe(EXPECTED);
    expect(chunks[chunks.length - 1]?.usage?.completion_tokens).toBe(12);
    expect(sim.requests.every((r) => r.provider === provider)).toBe(true);
  });

  it('together and deepinfra serve the same embeddings as openai; deepseek and minimax have none (404)', async () => {
    // bge-base-en-v1.5 answers 768 dims; text-embedding-3-small shortened to 768 is the same vector here.
    const o = await client('openai').embeddings.create({ model: 'text-embedding-3-small', input: ['x', 'y'], encoding_format: 'float', dimensions: 768 });
    for (const host of ['together', 'deepinfra'] as const) {
      const t = await client(host).embeddings.create({ model: 'BAAI/bge-base-en-v1.5', input: 'x', encoding_format: 'float' });
      expect(t.data[0]?.embedding).toHaveLength(768);
      expect(t.data[0]?.embedding).toEqual(o.data[0]?.embedding);
    }
    for (const host of ['deepseek', 'minimax'] as const) {
      await expect(client(host).embeddings.create({ model: 'deepseek-embed', input: 'x' })).rejects.toMatchObject({ status: 404 });
    }
  });
});

describe('openai SDK: several choices (n) and logprobs', () => {
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: PROMPT }];

  it('returns n choices indexed 0..n-1, each a different reply of the same length, usage counting all of them', async () => {
    const res = await client('openai').chat.completions.create({ model: 'gpt-4o', messages, n: 3 });
    expect(res.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(res.choices[0]?.message.content).toBe(EXPECTED);
    expect(new Set(res.choices.map((c) => c.message.content)).size).toBe(3);
    expect(res.choices.every((c) => c.message.content?.split(' ').length === 12 && c.finish_reason === 'stop')).toBe(true);
    // The prompt once, every choice's 12 completion tokens (OpenAI bills all n, providers.md §1.1).
    expect(res.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 36, total_tokens: 46 });
  });

  it('streams n choices interleaved by index; the SDK stream helper assembles each, and the usage chunk counts all', async () => {
    const buffered = await client('openai').chat.completions.create({ model: 'gpt-4o', messages, n: 2 });
    const runner = client('openai').chat.completions.stream({ model: 'gpt-4o', messages, n: 2, stream_options: { include_usage: true } });
    const indexes: number[] = [];
    runner.on('chunk', (c) => indexes.push(...c.choices.map((x) => x.index)));
    const final = await runner.finalChatCompletion();
    expect(final.choices.map((c) => c.message.content)).toEqual(buffered.choices.map((c) => c.message.content));
    expect(final.choices.map((c) => c.finish_reason)).toEqual(['stop', 'stop']);
    expect(final.usage?.completion_tokens).toBe(24);
    // Interleaved: the two choices alternate rather than one stream after the other.
    expect(indexes.slice(0, 4)).toEqual([0, 1, 0, 1]);
  });

  it('returns OpenAI-shaped logprobs when asked: one entry per completion token, joining to the content, top_logprobs as requested', async () => {
    const res = await client('openai').chat.completions.create({ model: 'gpt-4o', messages, logprobs: true, top_logprobs: 2 });
    const choice = res.choices[0]!;
    const tokens = choice.logprobs?.content ?? [];
    expect(choice.logprobs?.refusal).toBeNull();
    expect(tokens.map((t) => t.token).join('')).toBe(choice.message.content);
    expect(tokens).toHaveLength(res.usage?.completion_tokens ?? -1);
    for (const t of tokens) {
      expect(t.bytes).toEqual([...Buffer.from(t.token, 'utf8')]);
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top_logprobs).toHaveLength(2);
      expect(t.top_logprobs[0]).toEqual({ token: t.token, logprob: t.logprob, bytes: t.bytes });
      expect(t.top_logprobs[1]!.logprob).toBeLessThan(t.logprob);
    }
    const plain = await client('openai').chat.completions.create({ model: 'gpt-4o', messages });
    expect(plain.choices[0]?.logprobs).toBeNull();
  });

  it('streams each content chunk with the logprobs of its own tokens', async () => {
    const chunks = await collect(await client('openai').chat.completions.create({ model: 'gpt-4o', messages, logprobs: true, stream: true }));
    const content = chunks.filter((c) => c.choices[0]?.delta.content);
    expect(content.length).toBeGreaterThan(3);
    for (const c of content) {
      const tokens = c.choices[0]?.logprobs?.content ?? [];
      expect(tokens.map((t) => t.token).join('')).toBe(c.choices[0]?.delta.content);
      expect(tokens.every((t) => t.top_logprobs.length === 0)).toBe(true);
    }
  });

  it('follows each host: DeepSeek thinking mode refuses logprobs, MiniMax refuses n > 1 and answers logprobs: null', async () => {
    await expect(
      client('deepseek').chat.completions.create({
        model: 'deepseek-v4-flash',
        messages,
        logprobs: true,
        thinking: { type: 'enabled' },
      } as ChatCompletionCreateParamsNonStreaming),
    ).rejects.toMatchObject({ status: 400, param: 'logprobs' });
    const deepseek = await client('deepseek').chat.completions.create({ model: 'deepseek-v4-flash', messages, logprobs: true });
    expect(deepseek.choices[0]?.logprobs?.content?.length).toBeGreaterThan(0);
    await expect(client('minimax').chat.completions.create({ model: 'MiniMax-M2.7', messages, n: 2 })).rejects.toMatchObject({ status: 400 });
    const minimax = await client('minimax').chat.completions.create({
      model: 'MiniMax-M2.7',
      messages,
      logprobs: true,
      reasoning_split: true,
    } as ChatCompletionCreateParamsNonStreaming);
    expect(minimax.choices[0]?.logprobs).toBeNull();
  });
});
