import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CATALOGUE } from '../../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest, type ChatCompletionRequest } from '../../../functions/shared/openai/chat-request';
import type { ChunkParts } from '../../../functions/shared/openai/chat-response';
import { providerSpec } from '../../../functions/shared/providers/registry';
import type { AdapterContext } from '../../../functions/shared/providers/types';
import { runTransform, type StreamRun } from '../stream-run';

/**
 * Shared helpers of the OpenAI-compatible adapter tests (OpenAI, DeepSeek, MiniMax, Llama hosts;
 * fixtures in test/fixtures/openai and test/fixtures/minimax, written from providers.md §1.4,
 * §4.3–4.5, §5.2, §5.4).
 */

/** A fixture's bytes: `dir` is the fixture folder (`openai`, `minimax`). */
export const fixture = (name: string, dir = 'openai'): Buffer => readFileSync(join(__dirname, '..', '..', 'fixtures', dir, name));

/** The adapter context of a public model's target, from the real catalogue. */
export function ctxFor(model: string, targetIndex = 0): AdapterContext {
  const target = CATALOGUE.get(model)?.targets[targetIndex];
  if (!target) throw new Error(`no target for ${model}`);
  return { target, endpoint: { provider: target.provider, baseUrl: 'http://127.0.0.1:1/base', apiKey: 'upstream-key' } };
}

/** A validated client request (defaults applied, as the router receives it). */
export const request = (extra: Record<string, unknown> = {}): ChatCompletionRequest =>
  chatCompletionRequest.parse({ model: 'x', messages: [{ role: 'user', content: 'hi' }], ...extra });

/**
 * The JSON body the adapter of `model`'s first target would send upstream, less `stream: true` and
 * `stream_options` (checked here: every chat request goes upstream streamed, asking for usage), so tests
 * read the translation alone.
 */
export function sentBody(model: string, req: ChatCompletionRequest): unknown {
  const ctx = ctxFor(model);
  const { stream, stream_options, ...body } = JSON.parse(providerSpec(ctx.target.provider).adapter.buildChatRequest(req, ctx).body) as Record<string, unknown>;
  expect([stream, stream_options]).toEqual([true, { ...req.stream_options, include_usage: true }]);
  return body;
}

/** Runs bytes through decodeSse and a fresh transform of `model`'s first target, as the router does. */
export function runStreamCapturing(model: string, bytes: Buffer, size: number): Promise<StreamRun> {
  const ctx = ctxFor(model);
  return runTransform(providerSpec(ctx.target.provider).adapter.createStreamTransform(ctx), bytes, size);
}

/** The parts of a stream that must end cleanly. @throws whatever the transform threw. */
export async function runStream(model: string, bytes: Buffer, size: number): Promise<ChunkParts[]> {
  const run = await runStreamCapturing(model, bytes, size);
  if (run.error !== undefined) throw run.error;
  return run.parts;
}
