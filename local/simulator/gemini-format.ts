/**
 * Renders a planned reply as a Gemini `GenerateContentResponse` or its SSE stream
 * (providers.md §3.3-3.4): camelCase, `usageMetadata` on every chunk (running totals), finishReason on
 * the last chunk, events separated by `\r\n\r\n`, no `[DONE]`. A function call arrives whole in one
 * chunk with finishReason STOP (signed on 2.5/3 models, its thought signatures below). Thought parts carry
 * `thought: true` and are counted in `thoughtsTokenCount`, outside `candidatesTokenCount`.
 *
 * Several candidates (`generationConfig.candidateCount`, one {@link ReplyPlan} each) carry `index`
 * 0..n-1; `candidatesTokenCount` and `thoughtsTokenCount` add up every candidate (the prompt counts
 * once). Streamed, each event holds the next piece of every candidate that still has one.
 */
import { jsonEvent, type JsonReply, splitText, type SseEvent, type SseReply } from './deliver.js';
import { geminiStreamError } from './gemini-errors.js';
import { signFirstCall } from './gemini-input.js';
import { countWords, type JsonObject } from './json-narrowing.js';
import type { Finish, ReplyPlan } from './reply.js';
import type { SimCall } from './types.js';

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

function usageMetadata(plans: readonly ReplyPlan[], candidates: number, thoughts: number): JsonObject {
  const prompt = plans[0]?.promptTokens ?? 0;
  const out: JsonObject = {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates + thoughts,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
  };
  if (plans.some((p) => p.reasoning)) out['thoughtsTokenCount'] = thoughts;
  // A `[cached]` request's cache read (reply.ts), a subset of the prompt as Gemini reports it.
  const cached = plans[0]?.cachedTokens ?? 0;
  if (cached > 0) out['cachedContentTokenCount'] = cached;
  return out;
}

const sum = (plans: readonly ReplyPlan[], f: (p: ReplyPlan) => number): number => plans.reduce((n, p) => n + f(p), 0);

function envelope(call: SimCall, model: string): JsonObject {
  return { modelVersion: model, responseId: `sim-${call.seq.toString(36)}` };
}

function answerTokens(plan: ReplyPlan): number {
  return plan.completionTokens - plan.reasoningTokens;
}

function candidate(parts: JsonObject[], finish: string | undefined, index: number): JsonObject {
  return { content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index };
}

/** Buffered response, one candidate per plan. */
export function geminiResponse(call: SimCall, model: string, plans: readonly ReplyPlan[]): JsonReply {
  const candidates = plans.map((plan, index) => {
    const parts: JsonObject[] = [];
    if (plan.reasoning) parts.push({ text: plan.reasoning, thought: true });
    if (plan.text !== '' || plan.toolCalls.length === 0) parts.push({ text: plan.text });
    for (const c of plan.toolCalls) parts.push({ functionCall: { name: c.name, args: c.args } });
    signFirstCall(parts, model, call.seq);
    return candidate(parts, geminiFinishReason(plan.finish), index);
  });
  return {
    kind: 'json',
    status: 200,
    body: { candidates, usageMetadata: usageMetadata(plans, sum(plans, answerTokens), sum(plans, (p) => p.reasoningTokens)), ...envelope(call, model) },
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

/** One candidate's stream pieces: thoughts, text, then its whole function calls (or an empty text). */
function candidatePieces(call: SimCall, model: string, plan: ReplyPlan): Array<{ parts: JsonObject[]; thought: number; answer: number }> {
  const pieces: Array<{ parts: JsonObject[]; thought: number; answer: number }> = [];
  for (const text of splitText(plan.reasoning ?? '')) pieces.push({ parts: [{ text, thought: true }], thought: countWords(text), answer: 0 });
  for (const text of splitText(plan.text)) pieces.push({ parts: [{ text }], thought: 0, answer: countWords(text) });
  if (plan.toolCalls.length > 0) {
    const calls = signFirstCall(plan.toolCalls.map((c) => ({ functionCall: { name: c.name, args: c.args } })), model, call.seq);
    pieces.push({ parts: calls, thought: 0, answer: answerTokens(plan) - pieces.reduce((n, p) => n + p.answer, 0) });
  } else if (pieces.length === 0) {
    pieces.push({ parts: [{ text: '' }], thought: 0, answer: 0 });
  }
  return pieces;
}

/** `:streamGenerateContent?alt=sse` chunks; the last piece of each candidate carries its finishReason. */
export function geminiStream(call: SimCall, model: string, plans: readonly ReplyPlan[]): SseReply {
  const perCandidate = plans.map((plan) => candidatePieces(call, model, plan));
  const events: SseEvent[] = [];
  let thoughts = 0;
  let answer = 0;
  for (let step = 0; step < Math.max(...perCandidate.map((p) => p.length)); step++) {
    const candidates: JsonObject[] = [];
    let content = false;
    perCandidate.forEach((pieces, index) => {
      const piece = pieces[step];
      if (piece === undefined) return;
      thoughts += piece.thought;
      answer += piece.answer;
      content ||= piece.parts.some((p) => p['functionCall'] !== undefined || (typeof p['text'] === 'string' && p['text'] !== ''));
      const last = step === pieces.length - 1;
      candidates.push(candidate(piece.parts, last ? geminiFinishReason(plans[index]!.finish) : undefined, index));
    });
    events.push(jsonEvent({ candidates, usageMetadata: usageMetadata(plans, answer, thoughts), ...envelope(call, model) }, { content }));
  }
  return sse(events);
}
