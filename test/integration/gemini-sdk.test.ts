import { GoogleGenAI, Type } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * The Gemini API on modelmux (docs/providers.md §10), through the real `@google/genai` SDK changed
 * only in base URL and key, against the real handlers, DynamoDB Local and the upstream simulator: a
 * Gemini model and a Claude model, both through the chat core.
 */

let gw: RunningGateway;
let ai: GoogleGenAI;
let origin: string;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `gemini-sdk-${process.pid}`, devFreeTokens: 2_000_000 });
  origin = gw.baseUrl.replace(/\/v1$/, '');
  ai = new GoogleGenAI({ apiKey: gw.apiKey, httpOptions: { baseUrl: origin } });
});

afterAll(async () => {
  await gw?.close();
});

const weather = {
  name: 'get_weather',
  description: 'The weather in a city',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe.each(['gemini-2.5-flash', 'claude-sonnet-4-5'])('the Gemini API on %s', (model) => {
  it('generateContent: text, finishReason and usageMetadata', async () => {
    const r = await ai.models.generateContent({ model, contents: 'Hello Gemini API', config: { systemInstruction: 'Be brief.', temperature: 0.2 } });
    expect(r.text).toMatch(/Hello Gemini API/);
    expect(r.candidates?.[0]?.finishReason).toBe('STOP');
    expect(r.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    expect(r.usageMetadata?.totalTokenCount).toBeGreaterThan(r.usageMetadata?.promptTokenCount ?? 0);
  });

  it('generateContentStream: text chunks, the last with finishReason and usage', async () => {
    const chunks = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: 'Hello stream' })) chunks.push(c);
    expect(chunks.map((c) => c.text ?? '').join('')).toMatch(/Hello stream/);
    const last = chunks.at(-1);
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
  });

  it('countTokens: a positive count', async () => {
    const r = await ai.models.countTokens({ model, contents: 'How many tokens is this sentence?' });
    expect(r.totalTokens).toBeGreaterThan(0);
  });

  it('a function-calling round trip', async () => {
    const config = { tools: [{ functionDeclarations: [weather] }] };
    const first = await ai.models.generateContent({ model, contents: 'Use the get_weather tool for Paris', config });
    const call = first.functionCalls?.[0];
    expect(call?.name).toBe('get_weather');
    const second = await ai.models.generateContent({
      model,
      config,
      contents: [
        { role: 'user', parts: [{ text: 'Use the get_weather tool for Paris' }] },
        { role: 'model', parts: [{ functionCall: call }] },
        { role: 'user', parts: [{ functionResponse: { id: call?.id, name: 'get_weather', response: { temp: 21 } } }] },
      ],
    });
    expect(second.text ?? '').not.toBe('');
    expect(Type.OBJECT).toBe('OBJECT');
  });
});

describe('Google error bodies', () => {
  const post = (path: string, body: string, key = gw.apiKey) =>
    fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body });

  it('a bad key is 401 UNAUTHENTICATED', async () => {
    const res = await post('/v1beta/models/gemini-2.5-flash:generateContent', '{"contents":[]}', 'mm-bad');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
  });

  it('an unknown model is 404 NOT_FOUND', async () => {
    const res = await post('/v1beta/models/no-such-model:generateContent', '{"contents":[{"parts":[{"text":"hi"}]}]}');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });

  it('a bad body is 400 INVALID_ARGUMENT, also without a version prefix and with ?key=', async () => {
    const res = await fetch(`${origin}/models/gemini-2.5-flash:generateContent?key=${gw.apiKey}`, { method: 'POST', body: '{"contents":5}' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });
});

describe('the model list (GET /v1beta/models)', () => {
  it('ai.models.list() pages through the catalogue in Google shape: chat and embedding models', async () => {
    const names: string[] = [];
    const pager = await ai.models.list({ config: { pageSize: 5 } });
    for await (const m of pager) names.push(m.name ?? '');
    expect(names).toContain('models/gemini-2.5-flash');
    expect(names).toContain('models/claude-sonnet-4-5');
    expect(names).toContain('models/text-embedding-3-small');
    expect(new Set(names).size).toBe(names.length);
  });

  it('ai.models.get(): limits, methods and thinking; an embedding model embeds', async () => {
    const flash = await ai.models.get({ model: 'gemini-2.5-flash' });
    expect(flash).toMatchObject({ name: 'models/gemini-2.5-flash', thinking: true });
    expect(flash.inputTokenLimit).toBeGreaterThan(100_000);
    expect(flash.outputTokenLimit).toBeGreaterThan(1_000);
    expect(flash.supportedActions).toEqual(['generateContent', 'streamGenerateContent', 'countTokens']);
    const emb = await ai.models.get({ model: 'models/text-embedding-3-small' });
    expect(emb.supportedActions).toEqual(['embedContent', 'batchEmbedContents']);
  });

  it('an unknown model is 404 NOT_FOUND in Google body', async () => {
    const res = await fetch(`${origin}/v1beta/models/no-such-model`, { headers: { 'x-goog-api-key': gw.apiKey } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    await expect(ai.models.get({ model: 'no-such-model' })).rejects.toThrow(/NOT_FOUND|404/);
  });
});

/** The first 24 bytes of a PNG of `width` × `height` (signature and IHDR): all the counter reads of an image. */
function pngHead(width: number, height: number): string {
  const b = Buffer.alloc(24);
  b.writeUInt32BE(0x89504e47, 0);
  b.write('\r\n\x1a\n', 4, 'latin1');
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b.toString('base64');
}

/** A 3-page PDF as the page counter reads it (its page tree's `/Count`). */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Pages /Count 3 >> endobj\n%%EOF').toString('base64');

describe('inlineData: images and PDFs, as Gemini CLI sends them', () => {
  const ask = (extra?: object) => [{ role: 'user', parts: [{ text: 'What is in this file?' }, ...(extra ? [extra] : [])] }];
  const count = async (model: string, extra?: object) => (await ai.models.countTokens({ model, contents: ask(extra) })).totalTokens ?? 0;

  it('countTokens on a Gemini model: 258 per image up to 384 × 384 px, 258 per 768 × 768 tile above, 258 per PDF page', async () => {
    const text = await count('gemini-2.5-flash');
    expect(text).toBeGreaterThan(0);
    expect(await count('gemini-2.5-flash', { inlineData: { mimeType: 'image/png', data: pngHead(16, 16) } })).toBe(text + 258);
    expect(await count('gemini-2.5-flash', { inlineData: { mimeType: 'image/png', data: pngHead(384, 384) } })).toBe(text + 258);
    expect(await count('gemini-2.5-flash', { inlineData: { mimeType: 'image/png', data: pngHead(1000, 800) } })).toBe(text + 258 * 2 * 2);
    expect(await count('gemini-2.5-flash', { inlineData: { mimeType: 'application/pdf', data: PDF } })).toBe(text + 258 * 3);
  });

  it.each([
    ['claude-sonnet-4-6', 1_600, 4_800],
    ['gpt-4o', 85 + 170 * 8, 3_000 + 85 + 170 * 8],
  ])('countTokens on %s: 200 with the most an image (%i) and a PDF page (%i) can cost there', async (model, image, page) => {
    const text = await count(model);
    expect(await count(model, { inlineData: { mimeType: 'image/png', data: pngHead(16, 16) } })).toBe(text + image);
    expect(await count(model, { inlineData: { mimeType: 'application/pdf', data: PDF } })).toBe(text + 3 * page);
  });

  it.each([
    ['claude-sonnet-4-6', { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pngHead(16, 16) } }],
    ['gpt-4o', { type: 'image_url', image_url: { url: `data:image/png;base64,${pngHead(16, 16)}` } }],
    ['gemini-2.5-flash', { inlineData: { mimeType: 'image/png', data: pngHead(16, 16) } }],
  ])('generateContent on %s: an image goes upstream as its image input, and is seen', async (model, upstreamPart) => {
    const before = gw.simulator!.requests.length;
    const r = await ai.models.generateContent({ model, contents: ask({ inlineData: { mimeType: 'image/png', data: pngHead(16, 16) } }) });
    expect(r.text).toMatch(/^I see 1 image\./);
    const sent = gw.simulator!.requests.slice(before).find((q) => q.model === model);
    expect(JSON.stringify(sent?.body)).toContain(JSON.stringify(upstreamPart));
  });

  it.each([
    ['claude-sonnet-4-6', { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }],
    ['gpt-4o', { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'document.pdf' } }],
    ['gemini-2.5-flash', { inlineData: { mimeType: 'application/pdf', data: PDF } }],
  ])('generateContent on %s: a PDF goes upstream as its document input, never as an image', async (model, upstreamPart) => {
    const before = gw.simulator!.requests.length;
    const r = await ai.models.generateContent({ model, contents: ask({ inlineData: { mimeType: 'application/pdf', data: PDF } }) });
    expect(r.text).toMatch(/What is in this file/);
    const sent = gw.simulator!.requests.slice(before).find((q) => q.model === model);
    expect(JSON.stringify(sent?.body)).toContain(JSON.stringify(upstreamPart));
  });
});
