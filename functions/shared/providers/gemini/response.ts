import { parseUpstreamJson } from '../upstream-failure';
import type { CompletionChoice, CompletionParts } from '../../openai/chat-response';
import type { AdapterContext } from '../types';
import { UpstreamAttemptError } from '../types';
import { makeFailure } from '../upstream-failure';
import { readCandidateParts, toToolCall } from './candidate-parts';
import { failureFromRpcError } from './gemini-errors';
import { mapFinishReason, withToolCalls } from './finish-reason';
import { mapUsage } from './usage';
import { generateContentResponse } from './wire';

/**
 * A buffered `generateContent` body → OpenAI parts (Gemini API, providers.md §3.3).
 *
 * - Each candidate is a choice (`index` absent means 0, as proto3 omits it).
 * - Text → `content`; thoughts → `reasoning_content`; functionCalls → `tool_calls` (Gemini's own id,
 *   else a fresh random `call_…`; a thought signature in `extra_content`) and
 *   `finish_reason: "tool_calls"` although Gemini says STOP.
 * - A prompt blocked before generation (no candidates, `promptFeedback.blockReason`) is one choice
 *   with empty content and `finish_reason: "content_filter"`.
 *
 * @throws UpstreamAttemptError — retryable `server` for a body that is not a GenerateContentResponse,
 *   has neither candidates nor a block reason, or ends in a broken tool call
 *   (MALFORMED_FUNCTION_CALL…); classified from the RPC status for an `error` inside the 200.
 */
export function parseGeminiChatResponse(bodyText: string, _ctx: AdapterContext): CompletionParts {
  const parsed = generateContentResponse.safeParse(parseUpstreamJson(bodyText, 'gemini: response body is not valid JSON'));
  if (!parsed.success) throw new UpstreamAttemptError(makeFailure('server', 200, 'gemini: malformed generateContent body'));
  const body = parsed.data;
  if (body.error != null) throw new UpstreamAttemptError(failureFromRpcError(body.error, body.error.code ?? 200));

  const usage = mapUsage(body.usageMetadata);
  const candidates = body.candidates ?? [];
  if (candidates.length === 0) {
    if (body.promptFeedback?.blockReason == null) {
      throw new UpstreamAttemptError(makeFailure('server', 200, 'gemini: response has neither candidates nor a block reason'));
    }
    const blocked: CompletionChoice = { index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' };
    return { choices: [blocked], usage };
  }

  const choices = candidates.map((c, position): CompletionChoice => {
    const finish = mapFinishReason(c.finishReason);
    if (finish === 'broken-tool-call') {
      throw new UpstreamAttemptError(makeFailure('server', 200, `gemini: candidate ended with ${c.finishReason ?? 'a broken tool call'}`));
    }
    const out = readCandidateParts(c.content?.parts);
    const message: CompletionChoice['message'] = { role: 'assistant', content: out.text !== '' || out.calls.length === 0 ? out.text : null, refusal: null };
    if (out.reasoning !== '') message.reasoning_content = out.reasoning;
    if (out.calls.length > 0) {
      message.tool_calls = out.calls.map(toToolCall);
    }
    // A buffered body is complete by construction: a candidate without finishReason ended normally.
    return { index: c.index ?? position, message, logprobs: null, finish_reason: withToolCalls(finish ?? 'stop', out.calls.length > 0) };
  });
  choices.sort((a, b) => a.index - b.index);
  return { choices, usage };
}
