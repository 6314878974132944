import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { providerSpec } from '../../functions/shared/providers/registry';
import { manifestEntry, PROVIDER_NAMES, type ProviderName } from '../../functions/shared/providers/manifest';
import type { UpstreamFailure } from '../../functions/shared/providers/types';
import { startSimulator, type Simulator } from '../../local/simulator';

/**
 * Every adapter's error classifier against the upstream simulator's `context-length` fault, over real
 * HTTP: the bytes each provider sends for a prompt over its window (providers.md §1.5, §2.7, §3.5,
 * §4.5) must read as `context-length` — not retryable, not the client's plain 400 — or the router
 * would never try a larger window (routing/fallback-router.ts).
 */

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.setFault({}, { kind: 'context-length', limit: 128_000, tokens: 150_000 });
});

/** Where a chat request goes on each simulated provider, by its wire protocol (faults apply before the body is read). */
function chatUrl(p: ProviderName, stream: boolean): string {
  const wire = manifestEntry(p).wire;
  if (wire === 'anthropic') return `${sim.urls[p]}/v1/messages`;
  if (wire === 'gemini') return `${sim.urls[p]}/models/gemini-2.5-pro:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
  return `${sim.urls[p]}/chat/completions`;
}

async function classifyAnswer(
  p: ProviderName,
  stream: boolean,
  classify: (status: number, body: string, headers: Headers) => UpstreamFailure,
): Promise<UpstreamFailure> {
  const res = await fetch(chatUrl(p, stream), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream, messages: [] }),
  });
  expect(res.status).toBe(400);
  return classify(res.status, await res.text(), res.headers);
}

describe.each([false, true])('stream: %s', (stream) => {
  it.each(PROVIDER_NAMES)('the %s adapter reads it as context-length', async (provider) => {
    const f = await classifyAnswer(provider, stream, (s, b, h) => providerSpec(provider).adapter.classifyError(s, b, h));
    expect(f).toMatchObject({ kind: 'context-length', retryable: false, status: 400 });
    expect(f.clientError).toBeUndefined();
  });
});
