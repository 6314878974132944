import { describe, expect, it } from 'vitest';
import { isAcceptedProviderKey, providersToShow } from '../../web/src/byok/providers';

describe('provider keys page', () => {
  it("offers the API's providers in its order, named when known, plus any provider a key is attached for", () => {
    expect(providersToShow(['deepseek', 'openai'], []).map((p) => p.name)).toEqual(['DeepSeek', 'OpenAI']);
    expect(providersToShow(['openai'], ['mistral']).map((p) => [p.id, p.name])).toEqual([
      ['openai', 'OpenAI'],
      ['mistral', 'mistral'],
    ]);
    expect(providersToShow(undefined, []).map((p) => p.id)).toEqual(['openai', 'anthropic', 'deepseek']);
  });

  it("shows the models the API says each key serves, and none of its own (the catalogue's truth)", () => {
    const shown = providersToShow(['openai', 'deepseek'], [], { openai: ['gpt-4o', 'deepseek-embed'], deepseek: ['deepseek-v3'] });
    expect(shown.map((p) => [p.id, p.models])).toEqual([
      ['openai', ['gpt-4o', 'deepseek-embed']],
      ['deepseek', ['deepseek-v3']],
    ]);
    expect(providersToShow(['anthropic'], []).map((p) => p.models)).toEqual([[]]);
  });

  it('accepts only keys that begin with sk- (the spec)', () => {
    expect(isAcceptedProviderKey('sk-proj-abc')).toBe(true);
    expect(isAcceptedProviderKey('sk-ant-abc')).toBe(true);
    expect(isAcceptedProviderKey('sk-')).toBe(false);
    expect(isAcceptedProviderKey('AIzaSy-abc')).toBe(false);
    expect(isAcceptedProviderKey(' sk-abc')).toBe(false);
  });
});
