import { describe, expect, it } from 'vitest';
import { PROVIDER_MANIFEST, PROVIDER_NAMES, byokProviderNames } from '../../functions/shared/providers/manifest';
import { allProviders, providerSpec, resolveEndpoint } from '../../functions/shared/providers/registry';
import { SIMULATED_BASE } from '../../local/gateway';

describe('the provider manifest', () => {
  it('gives every provider an adapter in the registry, in manifest order', () => {
    expect(allProviders().map((p) => p.name)).toEqual(PROVIDER_NAMES);
    for (const entry of PROVIDER_MANIFEST) {
      const spec = providerSpec(entry.name);
      expect(typeof spec.adapter.buildChatRequest).toBe('function');
      expect(spec.keyVar).toBe(`${entry.name.toUpperCase()}_API_KEY`);
      expect(spec.baseUrlVar).toBe(`${entry.name.toUpperCase()}_BASE_URL`);
    }
  });

  it('lets users attach their own key for OpenAI, Anthropic and DeepSeek only (the sk- providers)', () => {
    expect(byokProviderNames()).toEqual(['openai', 'anthropic', 'deepseek']);
  });

  it('resolves the default base URL when no override is set, and none without a key', () => {
    expect(resolveEndpoint('together', { TOGETHER_API_KEY: 'k' })).toEqual({ provider: 'together', baseUrl: 'https://api.together.xyz/v1', apiKey: 'k' });
    expect(resolveEndpoint('together', { TOGETHER_BASE_URL: 'http://x/' })).toBeUndefined();
    expect(resolveEndpoint('together', { TOGETHER_API_KEY: 'k', TOGETHER_BASE_URL: 'http://x//' })?.baseUrl).toBe('http://x');
  });

  it('has the local runtime simulate every provider of the manifest', () => {
    expect(Object.keys(SIMULATED_BASE)).toEqual(PROVIDER_MANIFEST.map((p) => p.name.toUpperCase()));
  });
});
