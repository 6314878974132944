import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOGUE } from '../../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest, type ChatCompletionRequest } from '../../../functions/shared/openai/chat-request';
import type { ChunkParts } from '../../../functions/shared/openai/chat-response';
import { anthropicAdapter } from '../../../functions/shared/providers/anthropic/adapter';
import type { AdapterContext } from '../../../functions/shared/providers/types';
import { decodeSse } from '../../../functions/shared/sse/decode';

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

/** The JSON body the adapter would send upstream. */
export function sentBody(req: ChatCompletionRequest, ctx: AdapterContext = anthropicCtx(), stream = false): unknown {
  return JSON.parse(anthropicAdapter.buildChatRequest(req, ctx, stream).body);
}

/** Feeds bytes in pieces of `size`, so lines, CRLF pairs and multi-byte characters are split. */
async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Every part the transform emitted, and what it threw (undefined for a clean end). */
export interface StreamRun {
  parts: ChunkParts[];
  error: unknown;
}

/** Runs one fixture through decodeSse and a fresh transform, as the router does. */
export async function runStream(bytes: Buffer, size: number): Promise<StreamRun> {
  const transform = anthropicAdapter.createStreamTransform(anthropicCtx());
  const parts: ChunkParts[] = [];
  try {
    for await (const ev of decodeSse(pieces(bytes, size))) parts.push(...transform.push(ev));
    parts.push(...transform.end());
  } catch (error) {
    return { parts, error };
  }
  return { parts, error: undefined };
}
