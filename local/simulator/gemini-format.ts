/**
 * Renders a planned reply as a Gemini `GenerateContentResponse` or its SSE stream
 * (providers.md §3.3-3.4): camelCase, `usageMetadata` on every chunk (running totals), finishReason on
 * the last chunk, events separated by `\r\n\r\n`, no `[DONE]`. A function call arrives whole in one
 * chunk with finishReason STOP (signed on 2.5/3 models, gemini-signatures.ts). Thought parts carry
 * `thought: true` and are counted in `thoughtsTokenCount`, outside `candidatesTokenCount`.
 */
import { splitText } from './chunking.js';
import type { JsonReply, SseReply } from './deliver.js';
import { geminiStreamError } from './gemini-errors.js';
import { signFirstCall } from './gemini-signatures.js';
import type { JsonObject } from './json-narrowing.js';
import type { Finish, ReplyPlan } from './reply.js';
import { jsonEvent, type SseEvent } from './sse.js';
import { countWords } from './token-count.js';
import type { SimCall } from './call.js';

/** Gemini finishReason for a neutral finish: stop sequences and tool calls are both STOP (§3.3). */
export function geminiFinishReason(finish: Finish): string {
  switch (finish) {
    case 'length':
      return 'MAX_TOKENS';
    case 'stop':
    case 'stop_sequence':
    case 'tool_calls':
      return 'STOP';
    default:
      return 'STOP';
  }
}

function usageMetadata(plan: ReplyPlan, candidates: number, thoughts: number): JsonObject {
  const out: JsonObject = {
    promptTokenCount: plan.promptTokens,
    candidatesTokenCount: candidates,
    totalTokenCount: plan.promptTokens + candidates + thoughts,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: plan.promptTokens }],
  };
  if (plan.reasoning) out['thoughtsTokenCount'] = thoughts;
  return out;
}

function envelope(call: SimCall, model: string): JsonObject {
  return { modelVersion: model, responseId: `sim-${call.seq.toString(36)}` };
}

function answerTokens(plan: ReplyPlan): number {
  return plan.completionTokens - plan.reasoningTokens;
}

function candidate(parts: JsonObject[], finish?: string): JsonObject {
  return { content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 };
}

/** Buffered response. */
export function geminiResponse(call: SimCall, model: string, plan: ReplyPlan): JsonReply {
  const parts: JsonObject[] = [];
  if (plan.reasoning) parts.push({ text: plan.reasoning, thought: true });
  if (plan.text !== '' || plan.toolCalls.length === 0) parts.push({ text: plan.text });
  for (const c of plan.toolCalls) parts.push({ functionCall: { name: c.name, args: c.args } });
  signFirstCall(parts, model, call.seq);
  return {
    kind: 'json',
    status: 200,
    body: {
      candidates: [candidate(parts, geminiFinishReason(plan.finish))],
      usageMetadata: usageMetadata(plan, answerTokens(plan), plan.reasoningTokens),
      ...envelope(call, model),
    },
  };
}

/** The whole prompt refused by the safety filter: 200, no candidates (§3.3). */
export function geminiBlocked(call: SimCall, model: string, promptTokens: number): JsonObject {
  return {
    promptFeedback: {
      blockReason: 'SAFETY',
      safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }],
    },
    usageMetadata: { promptTokenCount: promptTokens, totalTokenCount: promptTokens },
    ...envelope(call, model),
  };
}

function sse(events: SseEvent[]): SseReply {
  return { kind: 'sse', eol: '\r\n', events, errorEvent: jsonEvent(geminiStreamError()) };
}

/** A one-chunk stream of the blocked-prompt answer. */
export function geminiBlockedStream(call: SimCall, model: string, promptTokens: number): SseReply {
  return sse([jsonEvent(geminiBlocked(call, model, promptTokens))]);
}

/** `:streamGenerateContent?alt=sse` chunks. */
export function geminiStream(call: SimCall, model: string, plan: ReplyPlan): SseReply {
  const finish = geminiFinishReason(plan.finish);
  const pieces: { part: JsonObject; thought: number; answer: number }[] = [];
  for (const text of splitText(plan.reasoning ?? '')) pieces.push({ part: { text, thought: true }, thought: countWords(text), answer: 0 });
  for (const text of splitText(plan.text)) pieces.push({ part: { text }, thought: 0, answer: countWords(text) });
  const events: SseEvent[] = [];
  let thoughts = 0;
  let answer = 0;
  pieces.forEach((p, i) => {
    thoughts += p.thought;
    answer += p.answer;
    const last = i === pieces.length - 1 && plan.toolCalls.length === 0;
    events.push(jsonEvent({ candidates: [candidate([p.part], last ? finish : undefined)], usageMetadata: usageMetadata(plan, answer, thoughts), ...envelope(call, model) }, { content: true }));
  });
  if (plan.toolCalls.length > 0 || pieces.length === 0) {
    const parts = plan.toolCalls.length > 0 ? signFirstCall(plan.toolCalls.map((c) => ({ functionCall: { name: c.name, args: c.args } })), model, call.seq) : [{ text: '' }];
    events.push(jsonEvent({ candidates: [candidate(parts, finish)], usageMetadata: usageMetadata(plan, answerTokens(plan), plan.reasoningTokens), ...envelope(call, model) }, { content: plan.toolCalls.length > 0 }));
  }
  return sse(events);
}
