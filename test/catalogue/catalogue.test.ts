import { describe, expect, it } from 'vitest';
import { CATALOGUE, displayedPricesFor, getModel, modelsServedBy } from '../../functions/shared/catalogue/catalogue';
import { loadCatalogue } from '../../functions/shared/catalogue/load';
import { aliasesSchema, catalogueSchema } from '../../functions/shared/catalogue/schema';
import { CATALOGUE_ALIASES } from '../../functions/shared/catalogue/aliases';
import { CATALOGUE_DATA } from '../../functions/shared/catalogue/models';
import { NotFoundError } from '../../functions/shared/errors/gateway-errors';
import { usdPerToken } from '../../functions/shared/app/models';
import { planAttempts } from '../../functions/shared/routing/attempt-plan';

const SPEC_NAMES = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3', 'deepseek-r1', 'minimax', 'llama-3-70b', 'deepseek-embed'];

describe('catalogue', () => {
  it('holds the nine spec names and 30+ models in all', () => {
    for (const id of SPEC_NAMES) expect(CATALOGUE.has(id), id).toBe(true);
    expect(CATALOGUE.size).toBeGreaterThanOrEqual(30);
    expect(CATALOGUE.get('deepseek-embed')?.kind).toBe('embedding');
  });

  it('maps retired upstream ids to live ones', () => {
    const retired = [
      'claude-3-5-sonnet-20241022',
      'claude-3-5-sonnet-20240620',
      'gemini-2.0-flash',
      'gemini-1.5-pro',
      'deepseek-chat',
      'deepseek-reasoner',
      'llama3-70b-8192',
      'claude-sonnet-4-20250514',
    ];
    for (const entry of CATALOGUE.values()) {
      for (const t of entry.targets) expect(retired, `${entry.id} → ${t.upstreamModel}`).not.toContain(t.upstreamModel);
    }
    expect(CATALOGUE.get('claude-3-5-sonnet')?.targets[0]?.upstreamModel).toBe('claude-sonnet-4-6');
    expect(CATALOGUE.get('gemini-2.0-flash')?.targets[0]?.upstreamModel).toBe('gemini-2.5-flash-lite');
  });

  it('routes deepseek-embed to a real embedding model, never to DeepSeek', () => {
    const t = CATALOGUE.get('deepseek-embed')?.targets ?? [];
    expect(t.length).toBeGreaterThan(0);
    expect(t.every((x) => x.provider !== 'deepseek')).toBe(true);
  });

  it('computes displayed prices as upstream × 1.055 in micro-USD per 1M tokens', () => {
    const gpt4o = CATALOGUE.get('gpt-4o')?.targets[0];
    expect(gpt4o?.upstreamPrice).toMatchObject({ input: 2_500_000, output: 10_000_000 });
    expect(gpt4o?.displayedPrice).toMatchObject({ input: 2_637_500, output: 10_550_000 });
    expect(CATALOGUE.get('gpt-4o-mini')?.targets[0]?.displayedPrice.input).toBe(158_250);
    for (const e of CATALOGUE.values()) {
      for (const t of e.targets) {
        expect(t.displayedPrice.input).toBe(Math.ceil((t.upstreamPrice.input * 1055) / 1000));
        expect(t.displayedPrice.output).toBe(Math.ceil((t.upstreamPrice.output * 1055) / 1000));
      }
    }
  });

  it('never lets an embedding model fall back to another model', () => {
    for (const e of CATALOGUE.values()) if (e.kind === 'embedding') expect(e.equivalents).toEqual([]);
    const embedding = CATALOGUE_DATA.find((e) => e.kind === 'embedding');
    const other = CATALOGUE_DATA.find((e) => e.kind === 'embedding' && e !== embedding);
    if (!embedding || !other) throw new Error('two embedding models expected');
    expect(() => loadCatalogue([{ ...embedding, equivalents: [other.id] }, other])).toThrow(/never fall back/);
  });

  it('has the spec’s image model and another provider’s, each other’s equivalents, with image data on image targets only', () => {
    expect(getModel('gpt-image-1', 'image').equivalents).toEqual(['gemini-2.5-flash-image']);
    expect(getModel('gemini-2.5-flash-image', 'image').equivalents).toEqual(['gpt-image-1']);
    expect(new Set(['gpt-image-1', 'gemini-2.5-flash-image'].flatMap((id) => CATALOGUE.get(id)?.targets.map((t) => t.provider) ?? []))).toEqual(
      new Set(['openai', 'gemini']),
    );
    for (const e of CATALOGUE.values()) for (const t of e.targets) expect(t.image !== undefined, t.key).toBe(e.kind === 'image');
    expect(() => getModel('gpt-image-1', 'chat')).toThrow(/image generation model; use \/v1\/images\/generations/);
    const image = CATALOGUE_DATA.find((e) => e.kind === 'image');
    const chat = CATALOGUE_DATA.find((e) => e.kind === 'chat');
    if (!image || !chat) throw new Error('an image and a chat model expected');
    expect(() => loadCatalogue([{ ...chat, equivalents: [], targets: [{ ...chat.targets[0]!, image: image.targets[0]!.image! }] }])).toThrow(/kind image/);
  });

  it('keeps every price to three dollar decimals, so the fee is exact and each request rounds once', () => {
    for (const e of CATALOGUE.values()) {
      for (const t of e.targets) {
        for (const p of [t.upstreamPrice, ...(t.longContext ? [t.longContext.upstreamPrice] : [])]) {
          expect(p.input % 1000, `${t.key} input`).toBe(0);
          expect(p.output % 1000, `${t.key} output`).toBe(0);
        }
      }
    }
  });

  it('prices Gemini 2.5 Pro prompts over 200K tokens at the long-context tier, for input and output', () => {
    const pro = getModel('gemini-2.5-pro', 'chat').targets[0];
    if (!pro) throw new Error('gemini-2.5-pro has no target');
    expect(pro.longContext?.upstreamPrice).toMatchObject({ input: 2_500_000, output: 15_000_000 });
    expect(displayedPricesFor(pro, 200_000)).toMatchObject({ input: 1_318_750, output: 10_550_000 });
    expect(displayedPricesFor(pro, 200_001)).toMatchObject({ input: 2_637_500, output: 15_825_000 });
    const mini = getModel('gpt-4o-mini', 'chat').targets[0];
    if (!mini) throw new Error('gpt-4o-mini has no target');
    expect(displayedPricesFor(mini, 10_000_000)).toBe(mini.displayedPrice);
  });

  it('ships data that passes the catalogue schema (it is not re-validated at load)', () => {
    expect(catalogueSchema.safeParse(CATALOGUE_DATA).success).toBe(true);
    expect(aliasesSchema.safeParse(CATALOGUE_ALIASES).success).toBe(true);
    expect(loadCatalogue(CATALOGUE_DATA, CATALOGUE_ALIASES)).toEqual(CATALOGUE);
  });

  it('resolves aliases (slugs, dated ids, retired names) to their model, and refuses a bad alias', () => {
    expect(getModel('openai/gpt-4o', 'chat').id).toBe('gpt-4o');
    expect(getModel('gpt-4o-2024-08-06', 'chat').id).toBe('gpt-4o');
    expect(getModel('gpt-3.5-turbo', 'chat').id).toBe('gpt-4o-mini');
    expect(getModel('openai/text-embedding-3-small', 'embedding').id).toBe('text-embedding-3-small');
    expect(() => getModel('openai/text-embedding-3-small', 'chat')).toThrow(/embedding model/);
    expect(CATALOGUE.get('gpt-4o')?.aliases).toContainEqual({ alias: 'gpt-4', kind: 'deprecated', source: expect.stringContaining('platform.openai.com') });
    const first = CATALOGUE_DATA[0];
    if (!first) throw new Error('empty catalogue');
    expect(() => loadCatalogue([first], [{ alias: 'x/y', model: 'nope', kind: 'slug' }])).toThrow(/unknown model/);
    expect(() => loadCatalogue([first], [{ alias: first.id, model: first.id, kind: 'slug' }])).toThrow(/repeats/);
    expect(() => loadCatalogue([first], [{ alias: 'Bad Alias', model: first.id, kind: 'slug' }])).toThrow();
  });

  it("gives every target its provider's data policy with a source, and every BYOK provider its models", () => {
    for (const e of CATALOGUE.values()) for (const t of e.targets) expect(t.dataPolicy.source.length).toBeGreaterThan(10);
    expect(modelsServedBy('openai')).toContain('deepseek-embed');
    expect(modelsServedBy('deepseek')).not.toContain('deepseek-embed');
  });

  it('rejects data with an unknown equivalent, a duplicate id, a bad limit or a target without a price', () => {
    const first = CATALOGUE_DATA[0];
    if (!first) throw new Error('empty catalogue');
    expect(() => loadCatalogue([{ ...first, equivalents: ['nope'] }])).toThrow(/unknown equivalent/);
    expect(() => loadCatalogue([first, first])).toThrow(/duplicate/);
    expect(() => loadCatalogue([{ ...first, equivalents: [], targets: [{ ...first.targets[0], maxOutputTokens: -1 }] }])).toThrow();
    const unpriced = { ...first, equivalents: [], targets: [{ ...(first.targets[0] as (typeof first.targets)[0]), upstreamModel: 'gpt-unpriced' }] };
    expect(() => loadCatalogue([unpriced])).toThrow(/no price for openai:gpt-unpriced/);
  });

  it('answers 404 model_not_found for an unknown model, and for a chat model on the embeddings route', () => {
    expect(() => getModel('gpt-9', 'chat')).toThrow(NotFoundError);
    expect(() => getModel('gpt-4o', 'embedding')).toThrow(/chat model/);
  });

  it('prints per-token prices as exact decimal strings', () => {
    expect(usdPerToken(2_637_500)).toBe('0.0000026375');
    expect(usdPerToken(158_250)).toBe('0.00000015825');
    expect(usdPerToken(0)).toBe('0');
    expect(usdPerToken(1_000_000_000_000)).toBe('1');
  });
});

describe('attempt plan', () => {
  const creds = { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', GEMINI_API_KEY: 'k' };

  it('tries the model targets first, then its equivalents, skipping providers without a key', () => {
    const plan = planAttempts(getModel('gpt-4o', 'chat'), CATALOGUE, creds);
    expect(plan.map((a) => `${a.publicModel}:${a.target.upstreamModel}`)).toEqual([
      'gpt-4o:gpt-4o',
      'claude-3-5-sonnet:claude-sonnet-4-6',
      'gemini-2.5-pro:gemini-2.5-pro',
    ]);
  });

  it('refuses images for a text-only model with a 400 naming the capability', () => {
    expect(() =>
      planAttempts(getModel('deepseek-v4-pro', 'chat'), CATALOGUE, { DEEPSEEK_API_KEY: 'k' }, { vision: true, tools: false, files: false, audio: false }),
    ).toThrow(/image input/);
  });

  it('answers 503 when no provider of the model has a key', () => {
    expect(() => planAttempts(getModel('minimax', 'chat'), CATALOGUE, {})).toThrow(expect.objectContaining({ status: 503 }));
  });
});
