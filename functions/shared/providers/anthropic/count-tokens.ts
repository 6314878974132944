import * as z from '../../validation/zod';
import { UpstreamAttemptError, type AdapterContext, type NativeRequest, type UpstreamHttpRequest } from '../types';
import { makeFailure, parseUpstreamJson } from '../upstream-failure';
import { ANTHROPIC_VERSION } from './request';

/**
 * Anthropic's token counting (`POST /v1/messages/count_tokens`, free of charge, rate-limited
 * separately from messages; docs/anthropic-messages.md, "count_tokens"): the client's count body
 * (model, system, messages, tools, tool_choice, thinking) as sent, with this target's model id, and
 * its `anthropic-version` / `anthropic-beta` headers unchanged. Only a native Messages request is
 * counted here.
 */
export function buildAnthropicCountTokensRequest(native: NativeRequest, ctx: AdapterContext): UpstreamHttpRequest | undefined {
  if (native.protocol !== 'anthropic-messages') return undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'x-api-key': ctx.endpoint.apiKey,
    'anthropic-version': native.headers['anthropic-version'] ?? ANTHROPIC_VERSION,
  };
  const beta = native.headers['anthropic-beta'];
  if (beta !== undefined) headers['anthropic-beta'] = beta;
  return { url: `${ctx.endpoint.baseUrl}/v1/messages/count_tokens`, headers, body: JSON.stringify({ ...native.body, model: ctx.target.upstreamModel }) };
}

const countBody = z.looseObject({ input_tokens: z.number().check(z.int(), z.gte(0)) });

/** `{"input_tokens": n}` → n. @throws UpstreamAttemptError when the body has no count. */
export function parseAnthropicCountTokens(bodyText: string): number {
  const parsed = countBody.safeParse(parseUpstreamJson(bodyText, 'anthropic: count_tokens body is not valid JSON'));
  if (!parsed.success) throw new UpstreamAttemptError(makeFailure('server', 200, 'anthropic: count_tokens body has no input_tokens'));
  return parsed.data.input_tokens;
}
