import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';
import { holdsReturned } from '../support/settle-queue';

/**
 * Image generation through the whole gateway with the official openai SDK
 * (`images.generate`, b64): the buffered function behind the Function URL stand-in, the simulator's
 * real PNG bytes, holds and the ledger in DynamoDB Local. Each bill is checked to the nano-dollar
 * against the displayed prices (upstream × 1.055, docs/prices.md "Image generation").
 */

let gw: RunningGateway;
let client: OpenAI;
let accountId: string;
let apiKey: string;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `images-${process.pid}` });
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  // Credit only (no free tokens): every image has a cost in nano-USD.
  accountId = (await createAccount({ freeTokens: 0, creditNanoUsd: 50_000_000_000 })).accountId;
  apiKey = (await createKey(accountId, 'test')).key;
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(async () => {
  sim().reset();
  (await import('../../functions/shared/routing/circuit-breaker')).breaker.reset();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

/** Width and height of a PNG from its IHDR chunk; throws unless the bytes are a PNG. */
function pngSize(b64: string): { width: number; height: number } {
  const bytes = Buffer.from(b64, 'base64');
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(bytes.toString('ascii', 12, 16)).toBe('IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** ceil((prompt × input + completion × output) / 1000) nano-USD, prices in µUSD per 1M tokens (money/price.ts). */
function cost(prompt: number, completion: number, inputMicro: number, outputMicro: number): number {
  return Math.ceil((prompt * inputMicro + completion * outputMicro) / 1000);
}

// Displayed prices, µUSD per 1M tokens: upstream × 1.055 (gpt-image-1.5 $5 / $32; gemini-2.5-flash-image $0.30 / $30).
const GPT_IMAGE = { input: 5_275_000, output: 33_760_000 };
const GEMINI_IMAGE = { input: 316_500, output: 31_650_000 };

async function apiError(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await p.catch((e: unknown) => e);
  if (!(err instanceof OpenAI.APIError)) throw new Error(`expected an API error, got ${JSON.stringify(err)}`);
  return err;
}

describe('POST /v1/images/generations through the openai SDK', () => {
  it('answers gpt-image-1 with PNG bytes as b64_json, billed exactly in the ledger and GET /v1/generation', async () => {
    const { getAccount } = await import('../../functions/shared/accounts/account-store');
    const before = await getAccount(accountId, { consistent: true });
    const { data, response } = await client.images
      .generate({ model: 'gpt-image-1', prompt: 'a red fox in the snow', size: '1024x1024', quality: 'low', response_format: 'b64_json' })
      .withResponse();
    expect(response.headers.get('x-modelmux-provider')).toBe('openai');
    expect(response.headers.get('x-modelmux-model')).toBe('gpt-image-1');
    expect(data.data).toHaveLength(1);
    expect(pngSize(data.data?.[0]?.b64_json ?? '')).toEqual({ width: 1024, height: 1024 });
    expect(data).toMatchObject({ output_format: 'png', size: '1024x1024', quality: 'low', background: 'opaque' });
    // The simulator counts the prompt's words; a low 1024×1024 image is 272 output tokens.
    expect(data.usage).toEqual({ input_tokens: 6, input_tokens_details: { text_tokens: 6, image_tokens: 0 }, output_tokens: 272, total_tokens: 278 });
    // The upstream was asked for the live model, without `response_format` (GPT Image refuses it).
    const sent = sim().requests.find((r) => r.path.endsWith('/images/generations'));
    expect(sent?.model).toBe('gpt-image-1.5');
    expect(sent?.body).toMatchObject({ model: 'gpt-image-1.5', prompt: 'a red fox in the snow', n: 1, size: '1024x1024', quality: 'low' });
    expect(sent?.body).not.toHaveProperty('response_format');

    const requestId = response.headers.get('x-request-id') as string;
    const entry = await pollLedgerEntry(accountId, requestId);
    const expected = cost(6, 272, GPT_IMAGE.input, GPT_IMAGE.output);
    expect(expected).toBe(9_214_370); // $0.00921437
    expect(entry).toMatchObject({
      promptTokens: 6,
      completionTokens: 272,
      costNanoUsd: expected,
      provider: 'openai',
      upstreamModel: 'gpt-image-1.5',
      status: 'complete',
    });
    // The request rode this gateway's credit lease: the account's debit is known once the lease is returned.
    await holdsReturned(accountId);
    const after = await getAccount(accountId, { consistent: true });
    expect((before?.creditNanoUsd ?? 0) - (after?.creditNanoUsd ?? 0)).toBe(expected);
    expect(after?.heldNanoUsd).toBe(0);

    const lookup = await fetch(`${gw.baseUrl}/generation?id=${encodeURIComponent(requestId)}`, { headers: { authorization: `Bearer ${apiKey}` } });
    const g = ((await lookup.json()) as { data: Record<string, unknown> }).data;
    expect(g).toMatchObject({
      model: 'gpt-image-1',
      provider_name: 'openai',
      upstream_model: 'gpt-image-1.5',
      tokens_prompt: 6,
      tokens_completion: 272,
      cost_nano_usd: expected,
    });
  });

  it('returns n images in one call, each a PNG of the asked size', async () => {
    const res = await client.images.generate({
      model: 'gpt-image-1',
      prompt: 'two boats',
      n: 3,
      size: '1536x1024',
      quality: 'medium',
      output_format: 'jpeg',
      output_compression: 60,
    });
    expect(res.data).toHaveLength(3);
    for (const d of res.data ?? []) expect(pngSize(d.b64_json ?? '')).toEqual({ width: 1536, height: 1024 });
    expect(res.usage?.output_tokens).toBe(3 * 1568);
    expect(sim().requests.filter((r) => r.provider === 'openai')).toHaveLength(1);
  });

  it('fails over to Gemini 2.5 Flash Image when OpenAI fails, billed at Gemini’s prices', async () => {
    sim().setFault({ provider: 'openai', model: 'gpt-image-1.5' }, { kind: 'status', status: 503 });
    const { data, response } = await client.images.generate({ model: 'gpt-image-1', prompt: 'a lighthouse at dusk', size: '1536x1024' }).withResponse();
    expect(response.headers.get('x-modelmux-provider')).toBe('gemini');
    expect(response.headers.get('x-modelmux-model')).toBe('gemini-2.5-flash-image');
    // 3:2 on Gemini is 1248×832 (its own pixels for the aspect ratio OpenAI's 1536x1024 maps to).
    expect(pngSize(data.data?.[0]?.b64_json ?? '')).toEqual({ width: 1248, height: 832 });
    const gemini = sim().requests.find((r) => r.provider === 'gemini');
    expect(gemini?.path).toContain('/models/gemini-2.5-flash-image:generateContent');
    expect(gemini?.body).toMatchObject({ generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2' } } });
    // Gemini's prompt count: 4 + the words; 1,290 tokens per image.
    expect(data.usage).toMatchObject({ input_tokens: 8, output_tokens: 1290 });
    const entry = await pollLedgerEntry(accountId, response.headers.get('x-request-id'));
    expect(entry).toMatchObject({
      publicModel: 'gpt-image-1',
      servedModel: 'gemini-2.5-flash-image',
      provider: 'gemini',
      promptTokens: 8,
      completionTokens: 1290,
      costNanoUsd: cost(8, 1290, GEMINI_IMAGE.input, GEMINI_IMAGE.output),
    });
    expect((entry?.fallbackPath as string[]).at(-1)).toBe('gemini-2.5-flash-image@gemini/gemini-2.5-flash-image:ok');
  });

  it('bills a lying upstream no more than the hold (the rest is recorded as the platform’s loss)', async () => {
    // `[overreport]`: the simulator reports 100 × the true output tokens.
    const { data, response } = await client.images
      .generate({ model: 'gpt-image-1', prompt: 'a cat [overreport]', size: '1024x1024', quality: 'low' })
      .withResponse();
    expect(data.usage?.output_tokens).toBe(27_200);
    const entry = await pollLedgerEntry(accountId, response.headers.get('x-request-id'));
    const reported = cost(3, 27_200, GPT_IMAGE.input, GPT_IMAGE.output);
    const charged = entry?.costNanoUsd as number;
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(reported);
    expect(charged + (entry?.lossNanoUsd as number)).toBe(reported);
  });
});

describe('refusals', () => {
  it('refuses an answer that cannot fit 6 MB before any upstream call, naming the count that fits', async () => {
    const err = await apiError(client.images.generate({ model: 'gpt-image-1', prompt: 'many', n: 4, size: '1024x1024' }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('response_too_large');
    expect(err.param).toBe('n');
    expect(err.message).toContain('at most 1 fit');
    expect(err.message).toContain('output_format: "jpeg"');
    expect(sim().requests).toHaveLength(0);
    // The same count as JPEG fits.
    const ok = await client.images.generate({ model: 'gpt-image-1', prompt: 'many', n: 4, size: '1024x1024', output_format: 'jpeg', output_compression: 80 });
    expect(ok.data).toHaveLength(4);
  });

  it.each([
    ['n above 10', { model: 'gpt-image-1', n: 11 }, 'n', /<=10/],
    ['an unknown size', { model: 'gpt-image-1', size: '512x512' }, 'size', /Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'/],
    ['n above what Gemini makes per call', { model: 'gemini-2.5-flash-image', n: 2 }, 'n', /Expected a value <= 1, but got 2/],
    ['a URL answer', { model: 'gpt-image-1', response_format: 'url' }, 'response_format', /b64_json/],
    ['a JPEG from a PNG-only model', { model: 'gemini-2.5-flash-image', output_format: 'jpeg' }, 'output_format', /'png' only/],
    ['an unknown parameter', { model: 'gpt-image-1', seed: 7 }, 'seed', /seed/],
  ] as const)('answers OpenAI’s 400 for %s', async (_name, params, param, message) => {
    const err = await apiError(client.images.generate({ prompt: 'x', ...params } as OpenAI.ImageGenerateParamsNonStreaming));
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe(param);
    expect(err.message).toMatch(message);
    expect(sim().requests).toHaveLength(0);
  });

  it('answers 404 for an unknown model, and for a chat model names the route it belongs to', async () => {
    expect((await apiError(client.images.generate({ model: 'dall-e-9', prompt: 'x' }))).status).toBe(404);
    const chat = await apiError(client.images.generate({ model: 'gpt-4o', prompt: 'x' }));
    expect(chat.status).toBe(404);
    expect(chat.message).toContain('/v1/chat/completions');
  });
});
