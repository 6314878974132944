import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOGUE } from '../../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest, type ChatCompletionRequest } from '../../../functions/shared/openai/chat-request';
import type { ChunkParts } from '../../../functions/shared/openai/chat-response';
import { geminiAdapter } from '../../../functions/shared/providers/gemini/adapter';
import type { AdapterContext, UpstreamFailure } from '../../../functions/shared/providers/types';
import { UpstreamAttemptError } from '../../../functions/shared/providers/types';
import { runTransform } from '../stream-run';

/** Shared helpers of the Gemini adapter tests (fixtures: test/fixtures/gemini, providers.md §3). */

export const BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/** A fixture's bytes (`.sse`) or text (`.json`). */
export const fixtureBytes = (name: string): Buffer => readFileSync(join(__dirname, '..', '..', 'fixtures', 'gemini', name));
export const fixtureText = (name: string): string => fixtureBytes(name).toString('utf8');

/** The adapter context of a public model's first target, from the real catalogue. */
export function ctxFor(model: string): AdapterContext {
  const target = CATALOGUE.get(model)?.targets[0];
  if (!target) throw new Error(`no target for ${model}`);
  return { target, endpoint: { provider: target.provider, baseUrl: BASE_URL, apiKey: 'gemini-test-key' } };
}

/** A validated client request (defaults applied, as the router receives it). */
export function chatRequest(fields: Record<string, unknown>): ChatCompletionRequest {
  return chatCompletionRequest.parse({ model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'hi' }], ...fields });
}

/** Decodes a fixture through the real SSE decoder and the Gemini transform, `size` bytes at a time. */
export async function runStream(name: string, size: number, model = 'gemini-2.0-flash'): Promise<ChunkParts[]> {
  const { parts, error } = await runTransform(geminiAdapter.createStreamTransform(ctxFor(model)), fixtureBytes(name), size);
  if (error !== undefined) throw error;
  return parts;
}

/**
 * Runs a stream that must fail: the parts emitted before the failure, and the failure's verdict.
 * @throws Error when the stream does not throw an UpstreamAttemptError.
 */
export async function runFailingStream(name: string, size: number): Promise<{ emitted: ChunkParts[]; failure: UpstreamFailure }> {
  const { parts, error } = await runTransform(geminiAdapter.createStreamTransform(ctxFor('gemini-2.0-flash')), fixtureBytes(name), size);
  if (error instanceof UpstreamAttemptError) return { emitted: parts, failure: error.failure };
  if (error !== undefined) throw error;
  throw new Error(`${name}: the stream did not fail`);
}

/** The verdict thrown by `fn`, which must throw an UpstreamAttemptError. */
export function failureOf(fn: () => unknown): UpstreamFailure {
  try {
    fn();
  } catch (err) {
    if (err instanceof UpstreamAttemptError) return err.failure;
    throw err;
  }
  throw new Error('expected an UpstreamAttemptError');
}
