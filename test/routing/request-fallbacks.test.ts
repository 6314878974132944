import { describe, expect, it } from 'vitest';
import { CATALOGUE, getModel } from '../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { InvalidRequestError } from '../../functions/shared/errors/gateway-errors';
import { planAttempts, requestFallbacks, requiredCapabilities } from '../../functions/shared/routing/attempt-plan';

/**
 * The client's own fallback list (`models`, OpenRouter's way) in the plan: after the requested
 * model's own targets, before its catalogue equivalents; checked against the catalogue with a 400
 * naming the bad entry.
 */

const creds = { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', GEMINI_API_KEY: 'k', DEEPSEEK_API_KEY: 'k', TOGETHER_API_KEY: 'k', DEEPINFRA_API_KEY: 'k' };
const keys = (model: string, models: string[], extra: Record<string, unknown> = {}) => {
  const req = chatCompletionRequest.parse({ model, models, messages: [{ role: 'user', content: 'hi' }], ...extra });
  return planAttempts(getModel(model, 'chat'), CATALOGUE, creds, requiredCapabilities(req), requestFallbacks(req.models, CATALOGUE)).map(
    (a) => `${a.publicModel}@${a.target.key}`,
  );
};
const refusal = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
};

describe("models: the request's own fallback list", () => {
  it("tries the listed models in order after the model's own targets, then the catalogue equivalents", () => {
    expect(keys('gpt-4o', ['gemini-2.0-flash', 'llama-3-70b'])).toEqual([
      'gpt-4o@openai:gpt-4o',
      'gemini-2.0-flash@gemini:gemini-2.5-flash-lite',
      'llama-3-70b@together:meta-llama/Llama-3.3-70B-Instruct-Turbo',
      'llama-3-70b@deepinfra:meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo',
      'claude-3-5-sonnet@anthropic:claude-sonnet-4-6',
      'gemini-2.5-pro@gemini:gemini-2.5-pro',
    ]);
  });

  it('adds nothing for the requested model itself or a repeated name (OpenRouter lists the primary first)', () => {
    expect(keys('gpt-4o', ['gpt-4o', 'claude-3-5-sonnet', 'claude-3-5-sonnet'])).toEqual(keys('gpt-4o', []));
  });

  it('skips listed targets that lack a capability the request uses, as for equivalents', () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const image = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] }];
    // llama-3-70b has tools but no vision.
    expect(keys('gpt-4o', ['llama-3-70b'], { tools }).some((k) => k.startsWith('llama-3-70b@'))).toBe(true);
    expect(keys('gpt-4o', ['llama-3-70b'], { messages: image }).some((k) => k.startsWith('llama-3-70b@'))).toBe(false);
  });

  it.each([
    [['gemini-2.0-flash', 'gpt-5-imaginary'], 'models[1]', 'model_not_found', /`gpt-5-imaginary` in `models` does not exist/],
    [['deepseek-embed'], 'models[0]', 'invalid_value', /`deepseek-embed` in `models` is an embedding model/],
  ])('refuses %j with a 400 naming the bad entry (%s)', (models, param, code, message) => {
    const err = refusal(() => requestFallbacks(models, CATALOGUE));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', param, code, message: expect.stringMatching(message) });
  });

  it('accepts route: "fallback" (OpenRouter\'s older switch) and nothing else; at most 8 models', () => {
    const parse = (extra: Record<string, unknown>) =>
      chatCompletionRequest.safeParse({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...extra });
    expect(parse({ route: 'fallback', models: ['claude-3-5-sonnet'] }).success).toBe(true);
    expect(parse({ route: 'fallback' }).success).toBe(true);
    expect(parse({ route: 'random' }).success).toBe(false);
    expect(parse({ models: Array.from({ length: 8 }, () => 'gpt-4o') }).success).toBe(true);
    expect(parse({ models: Array.from({ length: 9 }, () => 'gpt-4o') }).success).toBe(false);
    expect(parse({ models: [''] }).success).toBe(false);
  });
});
