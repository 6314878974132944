/**
 * Image generation with real PNG bytes (a gradient seeded by the prompt, a few KB): OpenAI's
 * `POST /images/generations` (GPT Image: `b64_json`, token `usage`) and Gemini's `generateContent` with
 * `responseModalities: ["IMAGE"]` (an `inlineData` part). Output tokens per image follow the providers'
 * tables (docs/prices.md "Image generation"); `[overreport]` in a prompt multiplies the usage, as in
 * chat. Always PNG, whatever `output_format` asks (the asked format is reported).
 */
import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import type { Reply } from './deliver.js';
import { asNumber, asString, countWords, field, isObject } from './json-narrowing.js';
import { OVERREPORT_FACTOR } from './reply.js';
import { isRetiredModel } from './retired-models.js';
import type { Problem, SimCall } from './types.js';

/** GPT Image output tokens per image by size and quality (docs/prices.md). */
const GPT_IMAGE_TOKENS: Readonly<Record<string, Readonly<Record<'low' | 'medium' | 'high', number>>>> = {
  '1024x1024': { low: 272, medium: 1056, high: 4160 },
  '1024x1536': { low: 408, medium: 1584, high: 6240 },
  '1536x1024': { low: 400, medium: 1568, high: 6208 },
};

/** Gemini 2.5 Flash Image: 1,290 output tokens per image (docs/prices.md); pixels per aspect ratio. */
const GEMINI_IMAGE_TOKENS = 1290;
const GEMINI_RATIOS: Readonly<Record<string, [number, number]>> = {
  '1:1': [1024, 1024],
  '3:2': [1248, 832],
  '2:3': [832, 1248],
  '4:3': [1184, 864],
  '3:4': [864, 1184],
  '16:9': [1344, 768],
  '9:16': [768, 1344],
};

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A valid 8-bit RGB PNG of `width` × `height`: a diagonal gradient coloured by `seed`. */
function pngImage(width: number, height: number, seed: string): Buffer {
  const [r0 = 0, g0 = 0, b0 = 0] = createHash('sha256').update(seed).digest();
  const row = 1 + width * 3;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    raw[y * row] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      const i = y * row + 1 + x * 3;
      const t = Math.floor(((x + y) * 255) / (width + height));
      raw[i] = (r0 + t) & 0xff;
      raw[i + 1] = (g0 + (t >> 1)) & 0xff;
      raw[i + 2] = (b0 + 255 - t) & 0xff;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, adaptive filtering, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function overreport(prompt: string, tokens: number): number {
  return prompt.includes('[overreport]') ? tokens * OVERREPORT_FACTOR : tokens;
}

/** OpenAI `POST /images/generations` (GPT Image models), with OpenAI's 400s for what it refuses. */
export function openAIImages(call: SimCall): Reply | Problem {
  const body = call.body;
  if (!isObject(body)) return { kind: 'bad-request', message: 'Request body must be a JSON object.' };
  const model = asString(body['model']) ?? 'dall-e-2';
  if (isRetiredModel(model)) return { kind: 'model-not-found', model };
  const prompt = asString(body['prompt']);
  if (!prompt) return { kind: 'bad-request', message: "Missing required parameter: 'prompt'.", param: 'prompt', code: 'missing_required_parameter' };
  if (body['response_format'] !== undefined)
    return { kind: 'bad-request', message: "Unknown parameter: 'response_format'.", param: 'response_format', code: 'unknown_parameter' };
  const n = asNumber(body['n']) ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > 10)
    return { kind: 'bad-request', message: `Invalid 'n': expected an integer from 1 to 10, but got ${n} instead.`, param: 'n', code: 'invalid_value' };
  const asked = asString(body['size']) ?? 'auto';
  const size = asked === 'auto' ? '1024x1024' : asked;
  const table = GPT_IMAGE_TOKENS[size];
  if (table === undefined)
    return {
      kind: 'bad-request',
      message: `Invalid value: '${asked}'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.`,
      param: 'size',
      code: 'invalid_value',
    };
  const askedQuality = asString(body['quality']) ?? 'auto';
  const quality = askedQuality === 'low' || askedQuality === 'high' ? askedQuality : 'medium';
  const [width, height] = size.split('x').map(Number) as [number, number];
  const input = countWords(prompt);
  const output = overreport(prompt, n * table[quality]);
  return {
    kind: 'json',
    status: 200,
    headers: { 'x-request-id': call.requestId },
    body: {
      created: Math.floor(Date.now() / 1000),
      data: Array.from({ length: n }, (_, i) => ({ b64_json: pngImage(width, height, `${prompt}#${i}`).toString('base64') })),
      background: body['background'] === 'transparent' ? 'transparent' : 'opaque',
      output_format: asString(body['output_format']) ?? 'png',
      quality,
      size,
      usage: { input_tokens: input, input_tokens_details: { text_tokens: input, image_tokens: 0 }, output_tokens: output, total_tokens: input + output },
    },
  };
}

/** True for a Gemini `generateContent` body asking for image output. */
export function wantsGeminiImage(body: unknown): boolean {
  const modalities = field(field(body, 'generationConfig'), 'responseModalities');
  return Array.isArray(modalities) && modalities.some((m) => typeof m === 'string' && m.toUpperCase() === 'IMAGE');
}

/** Gemini `generateContent` with image output: one PNG as `inlineData`, usage by modality. */
export function geminiImage(call: SimCall, model: string): Reply | Problem {
  const contents = field(call.body, 'contents');
  const texts = (Array.isArray(contents) ? contents : []).flatMap((c) => {
    const parts = field(c, 'parts');
    return (Array.isArray(parts) ? parts : []).map((p) => asString(field(p, 'text')) ?? '');
  });
  const prompt = texts.join('\n');
  if (prompt.trim() === '') return { kind: 'bad-request', message: '* GenerateContentRequest.contents: contents is not specified' };
  const ratio = asString(field(field(field(call.body, 'generationConfig'), 'imageConfig'), 'aspectRatio')) ?? '1:1';
  const dims = GEMINI_RATIOS[ratio];
  if (dims === undefined)
    return { kind: 'bad-request', message: `* GenerateContentRequest.generation_config.image_config.aspect_ratio: unsupported aspect ratio ${ratio}` };
  const promptTokens = 4 + countWords(prompt);
  const output = overreport(prompt, GEMINI_IMAGE_TOKENS);
  return {
    kind: 'json',
    status: 200,
    body: {
      candidates: [
        {
          content: { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: pngImage(dims[0], dims[1], prompt).toString('base64') } }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: promptTokens,
        candidatesTokenCount: output,
        totalTokenCount: promptTokens + output,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }],
        candidatesTokensDetails: [{ modality: 'IMAGE', tokenCount: output }],
      },
      modelVersion: model,
      responseId: `sim-${call.requestId}`,
    },
  };
}
