import { describe, expect, it } from 'vitest';
import { imagesRequest } from '../../../functions/shared/openai/images';
import { geminiAdapter } from '../../../functions/shared/providers/gemini/adapter';
import { BASE_URL, ctxFor, failureOf } from './helpers';

/** Image generation through `generateContent` with image output (providers.md §3.10). */

const ctx = ctxFor('gemini-2.5-flash-image');

function build(fields: Record<string, unknown>) {
  if (geminiAdapter.buildImagesRequest === undefined) throw new Error('geminiAdapter has no images');
  return geminiAdapter.buildImagesRequest(imagesRequest.parse({ model: 'gemini-2.5-flash-image', prompt: 'a fox', ...fields }), 1, ctx);
}

function parse(body: unknown) {
  if (geminiAdapter.parseImagesResponse === undefined) throw new Error('geminiAdapter has no images');
  return geminiAdapter.parseImagesResponse(JSON.stringify(body), ctx);
}

const image = { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } };

describe('Gemini image generation', () => {
  it('asks generateContent for image output, OpenAI sizes as aspect ratios', () => {
    const built = build({ size: '1024x1536' });
    expect(built.url).toBe(`${BASE_URL}/models/gemini-2.5-flash-image:generateContent`);
    expect(JSON.parse(built.body)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a fox' }] }],
      generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '2:3' } },
    });
    // `auto` leaves the model's own default ratio.
    expect(JSON.parse(build({ size: 'auto' }).body).generationConfig).toEqual({ responseModalities: ['IMAGE'] });
  });

  it('reads the inlineData image and the usage (the image as output tokens)', () => {
    const parts = parse({
      candidates: [{ content: { parts: [image] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 6, candidatesTokenCount: 1290, totalTokenCount: 1296 },
    });
    expect(parts.images).toEqual([{ b64: 'iVBORw0KGgo=', mimeType: 'image/png' }]);
    expect(parts.usage).toMatchObject({ prompt: 6, completion: 1290 });
  });

  it('is the client’s 400 (no fallback) when safety refused the image or blocked the prompt', () => {
    for (const body of [{ candidates: [{ content: { parts: [] }, finishReason: 'IMAGE_SAFETY' }] }, { promptFeedback: { blockReason: 'SAFETY' } }]) {
      const f = failureOf(() => parse(body));
      expect(f.kind).toBe('client');
      expect(f.clientError?.code).toBe('content_policy_violation');
    }
  });

  it('is a retryable server failure when the answer has no image for another reason', () => {
    const f = failureOf(() => parse({ candidates: [{ content: { parts: [{ text: 'no' }] }, finishReason: 'STOP' }] }));
    expect(f).toMatchObject({ kind: 'server', retryable: true });
  });
});
