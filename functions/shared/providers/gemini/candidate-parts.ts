import type { ResponsePart } from './wire';

/**
 * What one candidate's parts say, in OpenAI terms (Gemini API, providers.md §3.2–3.3): text parts →
 * content, `thought: true` text parts → reasoning, `functionCall` parts → calls with their `args`
 * object serialised as OpenAI's `arguments` string. Other part kinds (executable code, inline media
 * output, thought signatures) are not requested by modelmux and are ignored.
 */
export interface CandidateOutput {
  text: string;
  reasoning: string;
  calls: Array<{ name: string; arguments: string }>;
}

/** Reads a candidate's `content.parts` (absent parts: an empty output). */
export function readCandidateParts(parts: readonly ResponsePart[] | null | undefined): CandidateOutput {
  const out: CandidateOutput = { text: '', reasoning: '', calls: [] };
  for (const p of parts ?? []) {
    if (p.functionCall != null) {
      // A call without arguments has no `args` (proto3 omits an empty Struct): OpenAI's form is "{}".
      out.calls.push({ name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) });
    } else if (p.text != null) {
      if (p.thought === true) out.reasoning += p.text;
      else out.text += p.text;
    }
  }
  return out;
}

/** Our tool-call id: Gemini gives none (providers.md §3.2), so `call_<n>`, n counting from 0 per response. */
export function toolCallId(n: number): string {
  return `call_${n}`;
}
