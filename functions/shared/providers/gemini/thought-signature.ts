import type { ToolCall } from '../../openai/chat-tools';

/**
 * Gemini thought signatures on tool calls (providers.md §3.2): a `functionCall` part may carry an
 * opaque `thoughtSignature` that must be sent back, on the same part, in later turns of a Gemini
 * 2.5/3 tool loop. OpenAI's tool call has no such field, so modelmux carries it where Google's own
 * OpenAI-compatible layer does: `tool_call.extra_content.google.thought_signature`. A client that
 * echoes the assistant message back (as the OpenAI SDKs do) returns it unchanged.
 */

/** The `extra_content` that carries `signature` on an OpenAI tool call. */
export function signatureExtraContent(signature: string): NonNullable<ToolCall['extra_content']> {
  return { google: { thought_signature: signature } };
}

/** The thought signature an echoed tool call carries, if any. */
export function signatureOf(call: Pick<ToolCall, 'extra_content'>): string | undefined {
  return call.extra_content?.google?.thought_signature;
}

/**
 * Google's documented sentinel for a `functionCall` part that Gemini did not produce (a history from
 * another model, a fallback from Claude or GPT, a client that rebuilt its messages without
 * `extra_content`): Gemini 3 answers 400 "Function call is missing a thought_signature" without a
 * signature, and accepts this value in its place (providers.md §3.2; Vercel's AI SDK injects it the
 * same way, vercel/ai#15560).
 */
export const SKIP_SIGNATURE_VALIDATOR = 'skip_thought_signature_validator';

/** Whether `upstreamModel` is of the Gemini 3 family (`gemini-3-…`, `gemini-3.1-…`), which requires signatures on replayed calls. */
export function requiresCallSignatures(upstreamModel: string): boolean {
  return /^gemini-3[.-]/.test(upstreamModel);
}
