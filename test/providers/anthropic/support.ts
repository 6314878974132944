import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CATALOGUE } from '../../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest, type ChatCompletionRequest } from '../../../functions/shared/openai/chat-request';
import { anthropicAdapter } from '../../../functions/shared/providers/anthropic/adapter';
import type { AdapterContext, StreamTransform } from '../../../functions/shared/providers/types';
import { runTransform, type StreamRun } from '../stream-run';

/** Shared helpers of the Anthropic adapter tests (fixtures in test/fixtures/anthropic). */

export const fixture = (name: string): Buffer => readFileSync(join(__dirname, '..', '..', 'fixtures', 'anthropic', name));

/** The real catalogue target of `claude-3-5-sonnet` (served by Claude Sonnet 4.6, 64,000 output tokens). */
export function anthropicCtx(): AdapterContext {
  const target = CATALOGUE.get('claude-3-5-sonnet')?.targets[0];
  if (!target) throw new Error('no target for claude-3-5-sonnet');
  return { target, endpoint: { provider: 'anthropic', baseUrl: 'https://api.anthropic.test', apiKey: 'sk-ant-test' } };
}

/** A validated client request (defaults applied, as the gateway hands it to adapters). */
export const request = (extra: Record<string, unknown> = {}): ChatCompletionRequest =>
  chatCompletionRequest.parse({ model: 'claude-3-5-sonnet', messages: [{ role: 'user', content: 'hi' }], ...extra });

/**
 * The JSON body the adapter would send upstream, less its `stream: true` (checked here: every chat
 * request goes upstream streamed), so tests read the translation alone.
 */
export function sentBody(req: ChatCompletionRequest, ctx: AdapterContext = anthropicCtx()): unknown {
  const { stream, ...body } = JSON.parse(anthropicAdapter.buildChatRequest(req, ctx).body) as Record<string, unknown>;
  expect(stream).toBe(true);
  return body;
}

/**
 * A fresh transform showing only its translated parts: the part after each that carries the upstream
 * event verbatim (`upstreamEvent`, for the Anthropic Messages surface) is tested on its own.
 */
export function translatingTransform(): StreamTransform {
  const t = anthropicAdapter.createStreamTransform(anthropicCtx());
  return {
    push: (e) => t.push(e).filter((p) => p.upstreamEvent === undefined),
    end: () => t.end().filter((p) => p.upstreamEvent === undefined),
  };
}

/** Runs one fixture through decodeSse and a fresh transform, as the router does. */
export function runStream(bytes: Buffer, size: number): Promise<StreamRun> {
  return runTransform(translatingTransform(), bytes, size);
}
