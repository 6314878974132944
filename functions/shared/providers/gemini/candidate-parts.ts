import { randomBytes } from 'node:crypto';
import type { ToolCall } from '../../openai/chat-tools';
import { signatureExtraContent } from './thought-signature';
import type { ResponsePart } from './wire';

/**
 * What one candidate's parts say, in OpenAI terms (Gemini API, providers.md §3.2–3.3): text parts →
 * content, `thought: true` text parts → reasoning, `functionCall` parts → calls with their `args`
 * object serialised as OpenAI's `arguments` string and their `thoughtSignature` kept
 * (thought-signature.ts). Other part kinds (executable code, inline media output, signatures on text
 * parts) are not requested by modelmux and are ignored.
 */
export interface CandidateOutput {
  text: string;
  reasoning: string;
  calls: GeminiCall[];
}

/** One function call, with the id the client will see. */
export interface GeminiCall {
  id: string;
  name: string;
  /** JSON text of the call's `args` object. */
  arguments: string;
  thoughtSignature?: string;
}

/** Reads a candidate's `content.parts` (absent parts: an empty output). */
export function readCandidateParts(parts: readonly ResponsePart[] | null | undefined): CandidateOutput {
  const out: CandidateOutput = { text: '', reasoning: '', calls: [] };
  for (const p of parts ?? []) {
    if (p.functionCall != null) {
      // A call without arguments has no `args` (proto3 omits an empty Struct): OpenAI's form is "{}".
      const call: GeminiCall = { id: p.functionCall.id ?? mintToolCallId(), name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) };
      if (p.thoughtSignature != null && p.thoughtSignature !== '') call.thoughtSignature = p.thoughtSignature;
      out.calls.push(call);
    } else if (p.text != null) {
      if (p.thought === true) out.reasoning += p.text;
      else out.text += p.text;
    }
  }
  return out;
}

/** The OpenAI tool call for a Gemini call (its signature in `extra_content`). */
export function toToolCall(call: GeminiCall): ToolCall {
  const out: ToolCall = { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
  if (call.thoughtSignature !== undefined) out.extra_content = signatureExtraContent(call.thoughtSignature);
  return out;
}

/**
 * A tool-call id for a Gemini call that has none (older models give none, providers.md §3.2):
 * `call_` + 24 random base62-ish characters, unique across responses, so a conversation of several
 * tool rounds never carries the same id twice.
 */
export function mintToolCallId(): string {
  return `call_${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x')}`;
}
