import { beforeEach, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue';
import { providerPreferences, splitModelSuffix } from '../../functions/shared/openai/provider-preferences';
import { planAttempts } from '../../functions/shared/routing/attempt-plan';
import { exclusionReason, orderTargets } from '../../functions/shared/routing/attempt-plan';
import { FORGET_AFTER_MS, HALF_LIFE_MS, measuredSpeed, recordSpeed, resetSpeeds } from '../../functions/shared/routing/target-speed';

const keys = {
  OPENAI_API_KEY: 'k',
  ANTHROPIC_API_KEY: 'k',
  GEMINI_API_KEY: 'k',
  DEEPSEEK_API_KEY: 'k',
  TOGETHER_API_KEY: 'k',
  DEEPINFRA_API_KEY: 'k',
  MINIMAX_API_KEY: 'k',
};
const llama = CATALOGUE.get('llama-3-70b');
if (llama === undefined) throw new Error('llama-3-70b expected');
const prefs = (raw: unknown) => providerPreferences.parse(raw);

beforeEach(() => resetSpeeds());

describe('the provider object and suffixes', () => {
  it("parses OpenRouter's spellings and suffixes; refuses unknown providers and fields", () => {
    expect(prefs({ order: ['DeepInfra', 'Google-AI-Studio'] }).order).toEqual(['deepinfra', 'gemini']);
    expect(prefs({ sort: { by: 'latency' }, max_price: { prompt: '0.5' } })).toMatchObject({ sort: 'latency', max_price: { prompt: 0.5 } });
    expect(providerPreferences.safeParse({ only: ['acme'] }).success).toBe(false);
    expect(providerPreferences.safeParse({ quantizations: ['int4'] }).success).toBe(false);
    expect(splitModelSuffix('gpt-4o:nitro')).toEqual({ model: 'gpt-4o', sort: 'throughput' });
    expect(splitModelSuffix('openai/gpt-4o:floor')).toEqual({ model: 'openai/gpt-4o', sort: 'price' });
    expect(splitModelSuffix('gpt-4o:free')).toEqual({ model: 'gpt-4o:free', sort: undefined });
  });
});

describe('the plan under preferences', () => {
  it('orders by `order`, then by sort; allow_fallbacks: false keeps only the ordered providers and no equivalent', () => {
    const providers = (p: unknown) =>
      planAttempts(llama, CATALOGUE, keys, undefined, [], undefined, prefs(p)).map((a) => `${a.publicModel}@${a.target.provider}`);
    expect(providers({})[0]).toBe('llama-3-70b@together');
    expect(providers({ order: ['deepinfra'] }).slice(0, 2)).toEqual(['llama-3-70b@deepinfra', 'llama-3-70b@together']);
    expect(providers({ sort: 'price' }).slice(0, 2)).toEqual(['llama-3-70b@deepinfra', 'llama-3-70b@together']);
    expect(providers({ order: ['together'], allow_fallbacks: false })).toEqual(['llama-3-70b@together']);
    expect(providers({ allow_fallbacks: false })).toEqual(['llama-3-70b@together']);
    // Equivalents (deepseek-v3) follow unless fallbacks are off, and filters apply to them too.
    expect(providers({}).some((p) => p.startsWith('deepseek-v3@'))).toBe(true);
    expect(providers({ data_collection: 'deny' }).some((p) => p.startsWith('deepseek-v3@'))).toBe(false);
  });

  it('names every reason when nothing is left', () => {
    expect(() => planAttempts(llama, CATALOGUE, keys, undefined, [], undefined, prefs({ zdr: true, ignore: ['deepinfra'] }))).toThrow(
      /provider\.ignore: deepinfra; zdr: true|zdr: true.*provider\.ignore/,
    );
    const [together] = llama.targets;
    if (together === undefined) throw new Error('target expected');
    expect(exclusionReason(together, prefs({ max_price: { completion: 0.5 } }))).toMatch(/max_price\.completion/);
    expect(exclusionReason(together, prefs({ max_price: { completion: 1 } }))).toBeUndefined();
  });
});

describe('measured speed', () => {
  it('sorts by decayed throughput and first-token time; unmeasured targets go last', () => {
    const [together, deepinfra] = llama.targets as [(typeof llama.targets)[0], (typeof llama.targets)[0]];
    recordSpeed(together.key, 900, 500, 10_000); // 50 tokens/s
    expect(orderTargets(llama.targets, { sort: 'throughput' }).map((t) => t.provider)).toEqual(['together', 'deepinfra']);
    recordSpeed(deepinfra.key, 300, 1_000, 10_000); // 100 tokens/s
    expect(orderTargets(llama.targets, { sort: 'throughput' }).map((t) => t.provider)).toEqual(['deepinfra', 'together']);
    expect(orderTargets(llama.targets, { sort: 'latency' }).map((t) => t.provider)).toEqual(['deepinfra', 'together']);
  });

  it('weighs a new figure more the older the average is, and forgets an old one', () => {
    recordSpeed('t', 1_000, 100, 1_000, 0);
    recordSpeed('t', 2_000, 100, 1_000, 1); // right after: the least weight
    expect(measuredSpeed('t', 1)?.firstTokenMs).toBeCloseTo(1_200, 0);
    recordSpeed('t', 4_000, 100, 1_000, 1 + HALF_LIFE_MS); // one half-life later: half weight
    expect(measuredSpeed('t', 1 + HALF_LIFE_MS)?.firstTokenMs).toBeCloseTo(2_600, 0);
    expect(measuredSpeed('t', 2 + HALF_LIFE_MS + FORGET_AFTER_MS)).toBeUndefined();
  });
});
