/**
 * The official `@google/genai` SDK pointed at the simulator. The SDK composes
 * `<baseUrl>/<apiVersion>/models/<model>:<method>`, so `baseUrl` is the simulator's `/gemini` and the
 * default apiVersion `v1beta` completes the route.
 */
import { ApiError, FinishReason, GoogleGenAI, Type, type Content, type FunctionDeclaration } from '@google/genai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { embed, startSimulator, type Simulator } from '../../../local/simulator/index.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

const genai = (apiKey = 'AIza-test'): GoogleGenAI => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${sim.baseUrl}/gemini` } });

const PROMPT = 'Hello simulator, how are you today?';
const EXPECTED = 'Echo: Hello simulator, how are you today? alpha beta gamma delta epsilon';
const weather: FunctionDeclaration = {
  name: 'get_weather',
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING }, days: { type: Type.INTEGER } }, required: ['city', 'days'] },
};

describe('@google/genai against the native Gemini route', () => {
  it('generateContent returns the echo text, STOP and usageMetadata', async () => {
    const res = await genai().models.generateContent({ model: 'gemini-2.5-flash-lite', contents: PROMPT, config: { systemInstruction: 'Be brief.' } });
    expect(res.text).toBe(EXPECTED);
    expect(res.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 4 + 2 + 4 + 6, candidatesTokenCount: 12, totalTokenCount: 28 });
    expect(res.modelVersion).toBe('gemini-2.5-flash-lite');
    expect(sim.requests[0]).toMatchObject({
      provider: 'gemini',
      model: 'gemini-2.5-flash-lite',
      path: '/gemini/v1beta/models/gemini-2.5-flash-lite:generateContent',
      stream: false,
    });
    expect(sim.requests[0]?.headers['x-goog-api-key']).toBe('AIza-test');
  });

  it('generateContentStream chunks join to the buffered text; the last carries finishReason and final usage', async () => {
    const chunks = [];
    for await (const c of await genai().models.generateContentStream({ model: 'gemini-2.5-flash-lite', contents: PROMPT })) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.map((c) => c.text ?? '').join('')).toBe(EXPECTED);
    const last = chunks[chunks.length - 1]!;
    expect(last.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    expect(last.usageMetadata?.candidatesTokenCount).toBe(12);
    expect(chunks.slice(0, -1).every((c) => c.candidates?.[0]?.finishReason === undefined)).toBe(true);
    expect(sim.requests[0]?.path).toMatch(/:streamGenerateContent\?alt=sse$/);
  });

  it('returns a functionCall with schema-built args and STOP, then answers the functionResponse', async () => {
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
    const res = await genai().models.generateContent({ model: 'gemini-2.5-flash', contents, config: { tools: [{ functionDeclarations: [weather] }] } });
    expect(res.functionCalls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Paris', days: 1 } })]);
    expect(res.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    contents.push(res.candidates![0]!.content!);
    contents.push({ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21 } } }] });
    const next = await genai().models.generateContent({ model: 'gemini-2.5-flash', contents, config: { tools: [{ functionDeclarations: [weather] }] } });
    expect(next.text).toBe('Tool said: {"temp_c":21}');
  });

  it('signs the first function call of a 2.5/3 answer with a thoughtSignature, buffered and streamed (providers.md §3.2)', async () => {
    const config = { tools: [{ functionDeclarations: [weather, { name: 'noop' }] }] };
    const res = await genai().models.generateContent({ model: 'gemini-2.5-flash', contents: 'go [parallel]', config });
    const parts = res.candidates?.[0]?.content?.parts ?? [];
    expect(parts[0]).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: expect.any(String) });
    expect(parts[1]).not.toHaveProperty('thoughtSignature');
    const chunks = [];
    for await (const c of await genai().models.generateContentStream({ model: 'gemini-3-flash-preview', contents: 'go: use a tool', config })) chunks.push(c);
    expect(chunks[0]?.candidates?.[0]?.content?.parts?.[0]?.thoughtSignature).toEqual(expect.any(String));
    const older = await genai().models.generateContent({ model: 'gemini-2.0-flash-live', contents: 'go: use a tool', config });
    expect(older.candidates?.[0]?.content?.parts?.[0]).not.toHaveProperty('thoughtSignature');
  });

  it('refuses a Gemini 3 tool loop that replays a call without its signature (400 INVALID_ARGUMENT), and takes it signed', async () => {
    const model = 'gemini-3-flash-preview';
    const config = { tools: [{ functionDeclarations: [weather] }] };
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
    const res = await genai().models.generateContent({ model, contents, config });
    const answer = res.candidates![0]!.content!;
    const result: Content = { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21 } } }] };
    const unsigned: Content = { role: 'model', parts: (answer.parts ?? []).map(({ thoughtSignature: _dropped, ...p }) => p) };
    const err = await genai()
      .models.generateContent({ model, contents: [...contents, unsigned, result], config })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toMatch(/missing a thought_signature/);
    const next = await genai().models.generateContent({ model, contents: [...contents, answer, result], config });
    expect(next.text).toBe('Tool said: {"temp_c":21}');
    // Gemini 2.5 takes the unsigned replay (the signature only carries the model's reasoning over).
    const lenient = await genai().models.generateContent({ model: 'gemini-2.5-flash', contents: [...contents, unsigned, result], config });
    expect(lenient.text).toBe('Tool said: {"temp_c":21}');
  });

  it('streams a function call whole in one chunk', async () => {
    const chunks = [];
    for await (const c of await genai().models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'go [parallel]',
      config: { tools: [{ functionDeclarations: [weather, { name: 'noop' }] }] },
    }))
      chunks.push(c);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.functionCalls?.map((f) => f.name)).toEqual(['get_weather', 'noop']);
  });

  it('returns thought parts and thoughtsTokenCount with includeThoughts', async () => {
    const res = await genai().models.generateContent({ model: 'gemini-2.5-flash', contents: PROMPT, config: { thinkingConfig: { includeThoughts: true } } });
    const parts = res.candidates?.[0]?.content?.parts ?? [];
    expect(parts[0]).toMatchObject({ thought: true, text: expect.stringMatching(/^Thinking: /) });
    expect(parts[1]).toEqual({ text: EXPECTED });
    expect(res.usageMetadata?.thoughtsTokenCount).toBe(parts[0]!.text!.split(' ').length);
    expect(res.usageMetadata?.candidatesTokenCount).toBe(12);
  });

  it('maps maxOutputTokens to MAX_TOKENS and cuts before stop sequences', async () => {
    const cut = await genai().models.generateContent({ model: 'gemini-2.5-flash-lite', contents: PROMPT, config: { maxOutputTokens: 4 } });
    expect(cut.text).toBe('Echo: Hello simulator, how');
    expect(cut.candidates?.[0]?.finishReason).toBe(FinishReason.MAX_TOKENS);
    const stopped = await genai().models.generateContent({ model: 'gemini-2.5-flash-lite', contents: PROMPT, config: { stopSequences: ['beta'] } });
    expect(stopped.text).toBe('Echo: Hello simulator, how are you today? alpha ');
    expect(stopped.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
  });

  it('counts inlineData parts as images', async () => {
    const res = await genai().models.generateContent({
      model: 'gemini-2.5-flash-lite',
      contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }, { text: 'what' }] }],
    });
    expect(res.text).toMatch(/^I see 1 image\. Echo: what /);
  });

  it('blocks a prompt containing BLOCKME: 200, no candidates, promptFeedback SAFETY', async () => {
    const res = await genai().models.generateContent({ model: 'gemini-2.5-flash-lite', contents: 'please BLOCKME now' });
    expect(res.candidates).toBeUndefined();
    expect(res.promptFeedback?.blockReason).toBe('SAFETY');
    expect(res.text).toBeUndefined();
  });

  it('embeds one content and several through batchEmbedContents (what the SDK and the gateway call)', async () => {
    const one = await genai().models.embedContent({ model: 'gemini-embedding-001', contents: 'hello world' });
    expect(one.embeddings?.[0]?.values).toEqual(embed('hello world', 3072)); // the model's own length
    const many = await genai().models.embedContent({ model: 'gemini-embedding-001', contents: ['a', 'b'], config: { outputDimensionality: 4 } });
    expect(many.embeddings?.map((e) => e.values?.length)).toEqual([4, 4]);
    expect(sim.requests.map((r) => r.path)).toEqual([
      '/gemini/v1beta/models/gemini-embedding-001:batchEmbedContents',
      '/gemini/v1beta/models/gemini-embedding-001:batchEmbedContents',
    ]);
  });

  it('rejects a bad key with 400 INVALID_ARGUMENT / API_KEY_INVALID', async () => {
    const err = await genai('bad-key')
      .models.generateContent({ model: 'gemini-2.5-flash-lite', contents: 'x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toContain('API_KEY_INVALID');
  });

  it('rejects a retired model with 404 NOT_FOUND', async () => {
    await expect(genai().models.generateContent({ model: 'gemini-1.5-pro-retired', contents: 'x' })).rejects.toMatchObject({ status: 404 });
  });

  it('surfaces a mid-stream error chunk as an ApiError', async () => {
    sim.setFault({ provider: 'gemini' }, { kind: 'error-event-after-chunks', chunks: 2 });
    const texts: string[] = [];
    const run = async (): Promise<void> => {
      for await (const c of await genai().models.generateContentStream({ model: 'gemini-2.5-flash-lite', contents: PROMPT })) texts.push(c.text ?? '');
    };
    await expect(run()).rejects.toMatchObject({ status: 503 });
    expect(texts).toHaveLength(2);
  });
});

describe('@google/genai: several candidates and logprobs', () => {
  it('returns candidateCount candidates indexed 0..n-1, buffered and streamed, usage adding every candidate', async () => {
    const res = await genai().models.generateContent({ model: 'gemini-2.5-flash-lite', contents: PROMPT, config: { candidateCount: 3 } });
    expect(res.candidates?.map((c) => c.index)).toEqual([0, 1, 2]);
    const texts = res.candidates?.map((c) => c.content?.parts?.map((p) => p.text).join('')) ?? [];
    expect(texts[0]).toBe(EXPECTED);
    expect(new Set(texts).size).toBe(3);
    expect(res.usageMetadata).toMatchObject({ candidatesTokenCount: 36 });

    const streamed = new Map<number, string>();
    let last;
    for await (const chunk of await genai().models.generateContentStream({ model: 'gemini-2.5-flash-lite', contents: PROMPT, config: { candidateCount: 3 } })) {
      for (const c of chunk.candidates ?? [])
        streamed.set(c.index ?? 0, (streamed.get(c.index ?? 0) ?? '') + (c.content?.parts?.map((p) => p.text ?? '').join('') ?? ''));
      last = chunk;
    }
    expect([0, 1, 2].map((i) => streamed.get(i))).toEqual(texts);
    expect(last?.usageMetadata?.candidatesTokenCount).toBe(36);
  });

  it('refuses more than 8 candidates and logprobs on a 2.5 model with 400 INVALID_ARGUMENT', async () => {
    for (const config of [{ candidateCount: 9 }, { responseLogprobs: true, logprobs: 2 }]) {
      const err = await genai()
        .models.generateContent({ model: 'gemini-2.5-flash', contents: PROMPT, config })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(400);
    }
  });
});
