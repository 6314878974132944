import { parseUpstreamJson } from '../upstream-failure';
import type { ToolCall } from '../../openai/chat-request';
import type { AssistantMessage, CompletionParts } from '../../openai/chat-response';
import type { AdapterContext } from '../types';
import { UpstreamAttemptError } from '../types';
import { makeFailure } from '../upstream-failure';
import { failureFromErrorObject } from './anthropic-errors';
import { mapStopReason } from './finish-reason';
import { mapAnthropicUsage } from './usage';
import { messageBody } from './wire';

/**
 * A buffered Messages response (providers.md §2.5) → one OpenAI choice:
 * - `text` blocks → `message.content`, joined without separator (null when there is none);
 * - `tool_use` blocks → `tool_calls` `{id, type:"function", function:{name, arguments: JSON of input}}`;
 * - `thinking` blocks → `reasoning_content`; `redacted_thinking` and server-tool blocks are left out;
 * - `stop_reason` → `finish_reason` ({@link mapStopReason}; `stop` when absent);
 * - `usage` → OpenAI usage ({@link mapAnthropicUsage}).
 * @throws UpstreamAttemptError for a body that is not JSON, not a message, or an error object.
 */
export function parseAnthropicResponse(bodyText: string, ctx: AdapterContext): CompletionParts {
  const parsed = messageBody.safeParse(parseUpstreamJson(bodyText, 'anthropic: response body is not valid JSON'));
  if (!parsed.success) throw malformed(ctx);
  const body = parsed.data;
  if (body.type === 'error') throw new UpstreamAttemptError(failureFromErrorObject(body.error ?? undefined, 200));
  if (body.content == null) throw malformed(ctx);

  const text: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of body.content) {
    switch (block.type) {
      case 'text':
        text.push(block.text ?? '');
        break;
      case 'thinking':
        reasoning.push(block.thinking ?? '');
        break;
      case 'tool_use':
        toolCalls.push({
          id: block.id ?? `toolu_${toolCalls.length}`,
          type: 'function',
          function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) },
        });
        break;
      default:
        break;
    }
  }

  const message: AssistantMessage = { role: 'assistant', content: text.length > 0 ? text.join('') : null, refusal: null };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('');
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapStopReason(body.stop_reason) ?? 'stop' }],
    usage: mapAnthropicUsage(body.usage),
  };
}

function malformed(ctx: AdapterContext): UpstreamAttemptError {
  return new UpstreamAttemptError(makeFailure('server', 200, `${ctx.endpoint.provider}: malformed Messages response body`));
}
