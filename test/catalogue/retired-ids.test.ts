import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue';
import { RETIRED_MODEL_IDS, RETIRED_UPSTREAM_MODELS } from '../../local/simulator/retired-models';

/**
 * No catalogue target may name an upstream id that providers.md marks retired or decommissioned
 * (the shared list in local/simulator/retired-models.ts, which the simulator also answers with each
 * provider's model-not-found error): such a target would fail on every request in production while
 * "every catalogue model answers" passed against a simulator that accepted anything.
 */

const targets = [...CATALOGUE.values()].flatMap((e) => e.targets.map((t) => ({ model: e.id, provider: t.provider, upstream: t.upstreamModel })));

describe('retired upstream ids', () => {
  it.each(targets)('$model → $provider:$upstream is not a retired upstream id', ({ upstream }) => {
    expect(RETIRED_MODEL_IDS.has(upstream)).toBe(false);
  });

  it('lists the ids the reference marks retired (providers.md §1.10, §2.8, §3.6, §3.8, §4.2, §6)', () => {
    for (const id of [
      'claude-3-5-sonnet-20241022',
      'claude-3-5-sonnet-20240620',
      'claude-3-7-sonnet-20250219',
      'claude-3-5-haiku-20241022',
      'claude-opus-4-20250514',
      'claude-opus-4-1',
      'claude-sonnet-4-20250514',
      'gemini-1.5-pro',
      'gemini-1.5-flash',
      'gemini-2.0-flash',
      'text-embedding-004',
      'embedding-001',
      'gpt-image-1',
      'dall-e-2',
      'dall-e-3',
      'deepseek-chat',
      'deepseek-reasoner',
      'llama3-70b-8192',
      'llama3-8b-8192',
      'llama-3.3-70b-versatile',
      'llama-3.1-8b-instant',
    ]) {
      expect(RETIRED_MODEL_IDS.has(id), id).toBe(true);
    }
    expect(Object.keys(RETIRED_UPSTREAM_MODELS)).toEqual(['anthropic', 'gemini', 'openai', 'deepseek', 'groq']);
  });
});
