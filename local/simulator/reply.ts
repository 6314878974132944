/**
 * Deterministic reply planning, shared by every provider format so tests can assert content:
 * - plain turn: `Echo: <first 8 words of the last user text>` padded with a fixed word list
 *   ("alpha beta gamma …") to `replyWords` words; with images it starts `I see N image(s).`; the
 *   `choice`-th of several choices (`n`, `candidateCount`) starts its padding `choice` words further
 *   along the list, so choices differ but have the same length;
 * - tools declared and the last message a user turn: a call to the first tool (with `[parallel]` in
 *   the user text, one call to each tool, at most 3), arguments built from the schema;
 * - last message a tool result: `Tool said: <compact result>` (several results joined with `; `);
 * - structured output asked for (`response_format`, Gemini's JSON mime type, modelmux's Anthropic JSON
 *   mode; structured-output.ts): one JSON value, conforming to the schema when one was given;
 * - reasoning (when the provider/model/request asks for it) is a separate short text;
 * - a stop sequence cuts the text just before it; a max-token limit smaller than the reply keeps that
 *   many words. Token counts follow `countWords`.
 *
 * Misbehaviour on demand, by a marker in the last user text (as `[parallel]`), for the gateway's
 * billing tests (a bill never exceeds its hold):
 * - `[runaway]`: the output limit is ignored: the reply (and the reasoning, when there is one) runs to
 *   {@link RUNAWAY_WORDS} words whatever `max_tokens` says (tool-call arguments already ignore it: they
 *   follow the schema, e.g. `minItems`);
 * - `[overreport]`: the reported usage is {@link OVERREPORT_FACTOR} × the true prompt and completion counts.
 *
 * And a provider prompt cache on demand: `[cached]` reports {@link CACHED_SHARE} of the prompt (rounded
 * down) as read from the provider's cache, in each provider's own usage fields.
 */
import { countWords, type JsonObject, promptTokens } from './json-narrowing.js';
import { argsFromSchema } from './schema-value.js';
import { structuredAnswer } from './structured-output.js';

/** A function the model may call: name and JSON Schema of its parameters. */
export interface ToolDecl {
  name: string;
  parameters: unknown;
}

/** What the final input message is, which decides the kind of reply. */
export type LastTurn =
  | { kind: 'user'; text: string; images: number }
  | { kind: 'tool-result'; results: string[] }
  /** e.g. an assistant prefill, or no messages: answer the last user text without tools. */
  | { kind: 'other' };

/** A provider-neutral summary of a chat request: all the planner needs. */
export interface Conversation {
  /** One text per input message, system prompt included (for prompt tokens). */
  messageTexts: string[];
  lastTurn: LastTurn;
  /** Text of the last user message anywhere in the conversation. */
  lastUserText: string;
  /** Tools the model may call now, already narrowed by the request's tool choice. */
  tools: ToolDecl[];
  /** Output limit in words/tokens (max_tokens, max_completion_tokens, maxOutputTokens). */
  maxTokens?: number;
  stop: string[];
  /** Produce a reasoning text (DeepSeek reasoner, Anthropic thinking, Gemini includeThoughts, MiniMax). */
  reasoning: boolean;
  /**
   * The answer must be one JSON value (structured-output.ts): an object conforming to `schema` when
   * the request gave one, else `{"reply": <the plain reply>}`.
   */
  json?: { schema: unknown };
}

export interface ToolCallPlan {
  name: string;
  args: JsonObject;
  /** `JSON.stringify(args)`: what OpenAI-style providers send as `arguments`. */
  argsJson: string;
}

/** Neutral finish reason; each format maps it to its own vocabulary. */
export type Finish = 'stop' | 'length' | 'stop_sequence' | 'tool_calls';

export interface ReplyPlan {
  promptTokens: number;
  reasoning: string | undefined;
  /** Words of `reasoning` (0 without). */
  reasoningTokens: number;
  /** Visible reply text; '' when the reply is only tool calls. */
  text: string;
  toolCalls: ToolCallPlan[];
  finish: Finish;
  /** The stop sequence that ended the text, when `finish` is `stop_sequence`. */
  stopSequence?: string;
  /** Visible words + reasoning words (+ tool-call words). */
  completionTokens: number;
  /** Of `promptTokens`, reported as read from the provider's prompt cache (`[cached]`; 0 otherwise). */
  cachedTokens?: number;
}

export const FILLER_WORDS = [
  'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu',
  'nu', 'xi', 'omicron', 'pi', 'rho', 'sigma', 'tau', 'upsilon', 'phi', 'chi', 'psi', 'omega',
] as const;

const ECHO_WORDS = 8;

/** Words of a `[runaway]` reply and reasoning (the output limit ignored). */
export const RUNAWAY_WORDS = 5_000;
/** Factor of the usage an `[overreport]` request reports. */
export const OVERREPORT_FACTOR = 100;

/** Pads `text` with filler words to `words` words. */
function padTo(text: string, words: number): string {
  const out: string[] = text.match(/\S+/g) ?? [];
  for (let i = 0; out.length < words; i++) out.push(FILLER_WORDS[i % FILLER_WORDS.length]!);
  return out.join(' ');
}

/** Share of the prompt a `[cached]` request reports as a cache read. */
export const CACHED_SHARE = 0.75;

/** The plan as reported: `[overreport]` multiplies its token counts; `[cached]` reports a cache read. */
function reported(plan: ReplyPlan, conv: Conversation): ReplyPlan {
  const cached = conv.lastUserText.includes('[cached]') ? { cachedTokens: Math.floor(plan.promptTokens * CACHED_SHARE) } : {};
  if (!conv.lastUserText.includes('[overreport]')) return { ...plan, ...cached };
  return { ...plan, promptTokens: plan.promptTokens * OVERREPORT_FACTOR, completionTokens: plan.completionTokens * OVERREPORT_FACTOR };
}
const MAX_PARALLEL_CALLS = 3;

function firstWords(text: string, n: number): string[] {
  return (text.match(/\S+/g) ?? []).slice(0, n);
}

/** The untruncated plain reply for a user text (see module doc); `choice` shifts the padding. */
export function baseReplyText(userText: string, images: number, replyWords: number, choice = 0): string {
  const words: string[] = [];
  if (images > 0) words.push('I', 'see', String(images), images === 1 ? 'image.' : 'images.');
  words.push('Echo:', ...firstWords(userText, ECHO_WORDS));
  for (let i = choice; words.length < replyWords; i++) words.push(FILLER_WORDS[i % FILLER_WORDS.length]!);
  return words.join(' ');
}

/** Keep the first `n` words of `text` (whitespace between them preserved, trailing space dropped). */
export function firstNWords(text: string, n: number): string {
  if (n <= 0) return '';
  const re = /\S+/g;
  let end = 0;
  for (let i = 0; i < n; i++) {
    const m = re.exec(text);
    if (!m) return text;
    end = m.index + m[0].length;
  }
  return text.slice(0, end);
}

function applyLimits(
  full: string,
  stop: readonly string[],
  maxTokens: number | undefined,
): { text: string; finish: Finish; stopSequence?: string } {
  let text = full;
  let hit: string | undefined;
  let at = -1;
  for (const seq of stop) {
    if (!seq) continue;
    const i = full.indexOf(seq);
    if (i !== -1 && (at === -1 || i < at)) {
      at = i;
      hit = seq;
    }
  }
  if (hit !== undefined) text = full.slice(0, at);
  // The limit wins when it bites before the stop sequence would have been generated.
  if (maxTokens !== undefined && countWords(text) > maxTokens) {
    return { text: firstNWords(text, maxTokens), finish: 'length' };
  }
  return hit !== undefined ? { text, finish: 'stop_sequence', stopSequence: hit } : { text, finish: 'stop' };
}

function toolCallsFor(conv: Conversation, userText: string): ToolCallPlan[] {
  const chosen = userText.includes('[parallel]') ? conv.tools.slice(0, MAX_PARALLEL_CALLS) : conv.tools.slice(0, 1);
  return chosen.map((tool) => {
    const args = argsFromSchema(tool.parameters);
    return { name: tool.name, args, argsJson: JSON.stringify(args) };
  });
}

function reasoningFor(conv: Conversation, calls: readonly ToolCallPlan[]): string {
  if (calls.length > 0) return `Thinking: I should call ${calls.map((c) => c.name).join(' and ')}.`;
  if (conv.lastTurn.kind === 'tool-result') return 'Thinking: the tool returned a result; I will report it.';
  const echoed = firstWords(conv.lastUserText, ECHO_WORDS).join(' ');
  return `Thinking: the user wrote ${echoed || 'nothing'}; I will echo it back.`;
}

/**
 * Plan the reply to `conv`. Pure and deterministic.
 * @param opts.choice which of several choices this is (0-based, default 0; see the module doc).
 */
export function planReply(conv: Conversation, opts: { replyWords: number; choice?: number }): ReplyPlan {
  const prompt = promptTokens(conv.messageTexts);
  const turn = conv.lastTurn;
  const calls = turn.kind === 'user' && conv.tools.length > 0 ? toolCallsFor(conv, turn.text) : [];
  const runaway = conv.lastUserText.includes('[runaway]');
  const reasoning = conv.reasoning ? (runaway ? padTo(reasoningFor(conv, calls), RUNAWAY_WORDS) : reasoningFor(conv, calls)) : undefined;
  const reasoningTokens = reasoning ? countWords(reasoning) : 0;
  if (calls.length > 0) {
    const callWords = calls.reduce((sum, c) => sum + countWords(`${c.name} ${c.argsJson}`), 0);
    return reported({
      promptTokens: prompt,
      reasoning,
      reasoningTokens,
      text: '',
      toolCalls: calls,
      finish: 'tool_calls',
      completionTokens: callWords + reasoningTokens,
    }, conv);
  }
  const plain =
    turn.kind === 'tool-result'
      ? `Tool said: ${turn.results.join('; ')}`
      : baseReplyText(turn.kind === 'user' ? turn.text : conv.lastUserText, turn.kind === 'user' ? turn.images : 0, runaway ? RUNAWAY_WORDS : opts.replyWords, opts.choice ?? 0);
  const full = conv.json === undefined ? plain : structuredAnswer(conv.json.schema, plain);
  const limited = applyLimits(full, conv.stop, runaway ? undefined : conv.maxTokens);
  return reported({
    promptTokens: prompt,
    reasoning,
    reasoningTokens,
    text: limited.text,
    toolCalls: [],
    finish: limited.finish,
    ...(limited.stopSequence !== undefined ? { stopSequence: limited.stopSequence } : {}),
    completionTokens: countWords(limited.text) + reasoningTokens,
  }, conv);
}

/** One plan per choice (`count` ≥ 1): choice 0 is the single-choice reply. */
export function planChoices(conv: Conversation, opts: { replyWords: number }, count: number): ReplyPlan[] {
  return Array.from({ length: Math.max(1, count) }, (_, choice) => planReply(conv, { ...opts, choice }));
}

/** Compact form of a tool result: re-serialised JSON if it parses, else whitespace collapsed. */
export function compactResult(content: string): string {
  try {
    return JSON.stringify(JSON.parse(content));
  } catch {
    return content.replace(/\s+/g, ' ').trim();
  }
}
