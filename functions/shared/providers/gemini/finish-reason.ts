import type { FinishReason } from '../../openai/chat-response';

/**
 * Gemini `finishReason` → OpenAI `finish_reason` (Gemini API, providers.md §3.3 enum and mapping).
 *
 * - `null`: not finished (absent, or the proto default `FINISH_REASON_UNSPECIFIED`).
 * - `'broken-tool-call'`: the model tried to call a function and failed (`MALFORMED_FUNCTION_CALL`,
 *   `UNEXPECTED_TOOL_CALL`, `TOO_MANY_TOOL_CALLS`). The body is then empty or unusable; passing it on
 *   as `stop` is the silent failure of LiteLLM #21744 (peers.md B5), so callers raise a retryable
 *   `server` failure instead: the router retries or falls back before the first chunk.
 *
 * `STOP` maps to `stop`; callers turn it into `tool_calls` when the candidate held a functionCall,
 * because Gemini says STOP there too (§3.3).
 */
export type GeminiFinish = FinishReason | 'broken-tool-call' | null;

/** Maps one `finishReason` (see {@link GeminiFinish} for the meaning of each result). */
export function mapFinishReason(reason: string | null | undefined): GeminiFinish {
  switch (reason) {
    case null:
    case undefined:
    case '':
    case 'FINISH_REASON_UNSPECIFIED':
      return null;
    case 'STOP':
      return 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
    case 'IMAGE_OTHER':
      return 'content_filter';
    case 'MALFORMED_FUNCTION_CALL':
    case 'UNEXPECTED_TOOL_CALL':
    case 'TOO_MANY_TOOL_CALLS':
      return 'broken-tool-call';
    case 'LANGUAGE':
    case 'OTHER':
    case 'NO_IMAGE':
      return 'stop';
    default:
      // A value added to the enum after this was written: the answer did end, so say so plainly.
      return 'stop';
  }
}

/** OpenAI's `tool_calls` when the candidate called a function and Gemini reported a plain STOP. */
export function withToolCalls(finish: FinishReason, sawFunctionCall: boolean): FinishReason {
  return sawFunctionCall && finish === 'stop' ? 'tool_calls' : finish;
}
