/**
 * Deterministic replies, the same on every provider so tests can assert content (README.md "Replies"):
 * - a plain turn: `Echo: <first 8 words of the last user text>` padded with {@link FILLER_WORDS} to
 *   `replyWords` words (`I see N image(s).` first with images); the `choice`-th of several choices pads
 *   from the `choice`-th filler word;
 * - a user turn whose prompt asks for a tool (names it, or the request forces a call): a call to that
 *   tool (tool-intent.ts); tools merely declared are not called; after tool results, text:
 *   `Tool said: <compact results>` (JSON re-serialised, other text its first line);
 * - structured output asked for: one JSON value (schema-value.ts); reasoning, when asked, a short text;
 * - a stop sequence cuts just before it; a smaller max-token limit keeps that many words.
 * Markers in the last user text: `[runaway]` ignores the output limit ({@link RUNAWAY_WORDS} words),
 * `[overreport]` reports {@link OVERREPORT_FACTOR} × the usage, `[cached]` reports {@link CACHED_SHARE}
 * of the prompt as a cache read.
 */
import { countWords, type JsonObject, promptTokens } from './json-narrowing.js';
import { structuredAnswer } from './schema-value.js';
import { argsFor, type ToolDecl, toolsAskedFor } from './tool-intent.js';

export type { ToolDecl } from './tool-intent.js';

/** What the final input message is, which decides the kind of reply. */
export type LastTurn = { kind: 'user'; text: string; images: number } | { kind: 'tool-result'; results: string[] } | { kind: 'other' };

/** A provider-neutral summary of a chat request: all the planner needs. */
export interface Conversation {
  /** One text per input message, system prompt included (for prompt tokens). */
  messageTexts: string[];
  lastTurn: LastTurn;
  /** Text of the last user message (markers are read here). */
  lastUserText: string;
  /** Tools the model may call now, already narrowed by the request's tool choice. */
  tools: ToolDecl[];
  /** The tool choice forces a call (`required`, `any`, a named tool, Gemini's `ANY`). */
  toolForced?: boolean;
  /** Output limit in tokens (= words). */
  maxTokens?: number | undefined;
  stop: string[];
  reasoning: boolean;
  /** One JSON value is asked for: conforming to `schema`, or `{"reply": …}` without one. */
  json?: { schema: unknown } | undefined;
}

/**
 * One input message as every dialect reads it (the shared input shape each dialect maps into).
 * `note`: a system or developer message inside the list, passed over when finding the turn answered.
 */
export interface Message {
  role: 'user' | 'assistant' | 'tool' | 'note';
  texts: string[];
  images: number;
  /** Tool results, raw. */
  results: string[];
  /** Other counted text: tool calls as `name argsJson`, thinking. */
  extra: string[];
}

/** The fields of a {@link Conversation} a dialect reads directly. */
type Settings = Omit<Conversation, 'messageTexts' | 'lastTurn' | 'lastUserText'>;

/**
 * The conversation of `messages` (after an optional system prompt). The last user text is the last
 * user message's, or with `textOnly` the last one that has text (Gemini).
 */
export function conversationOf(messages: readonly Message[], system: string | undefined, settings: Settings, textOnly = false): Conversation {
  const lastUser = messages.findLast((m) => m.role === 'user' && (!textOnly || m.texts.length > 0));
  return {
    messageTexts: [...(system === undefined ? [] : [system]), ...messages.map((m) => [...m.texts, ...m.results, ...m.extra].join(' '))],
    lastTurn: lastTurnOf(messages),
    lastUserText: lastUser?.texts.join('\n') ?? '',
    ...settings,
  };
}

/** The turn answered: the last message, notes after it aside; trailing tool messages answer together. */
function lastTurnOf(all: readonly Message[]): LastTurn {
  let end = all.length;
  while (end > 0 && all[end - 1]!.role === 'note') end--;
  const last = all[end - 1];
  if (last?.role === 'tool') {
    let start = end - 1;
    while (start > 0 && all[start - 1]!.role === 'tool') start--;
    return {
      kind: 'tool-result',
      results: all
        .slice(start, end)
        .flatMap((m) => m.results)
        .map(compactResult),
    };
  }
  if (last?.role !== 'user') return { kind: 'other' };
  if (last.results.length > 0) return { kind: 'tool-result', results: last.results.map(compactResult) };
  return { kind: 'user', text: last.texts.join('\n'), images: last.images };
}

/** Tools narrowed by the tool choice: none, only the `named` ones, or all. */
export function chooseTools(tools: ToolDecl[], none: boolean, named?: readonly unknown[]): ToolDecl[] {
  return none ? [] : named === undefined ? tools : tools.filter((t) => named.includes(t.name));
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
  reasoningTokens: number;
  /** Visible reply text; '' when the reply is only tool calls. */
  text: string;
  toolCalls: ToolCallPlan[];
  finish: Finish;
  /** The stop sequence that ended the text, when `finish` is `stop_sequence`. */
  stopSequence?: string;
  /** Visible words + reasoning words (+ tool-call words). */
  completionTokens: number;
  /** Of `promptTokens`, reported as a prompt-cache read (`[cached]`). */
  cachedTokens?: number;
}

export const FILLER_WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'zeta',
  'eta',
  'theta',
  'iota',
  'kappa',
  'lambda',
  'mu',
  'nu',
  'xi',
  'omicron',
  'pi',
  'rho',
  'sigma',
  'tau',
  'upsilon',
  'phi',
  'chi',
  'psi',
  'omega',
] as const;

const ECHO_WORDS = 8;
export const RUNAWAY_WORDS = 5_000;
export const OVERREPORT_FACTOR = 100;
export const CACHED_SHARE = 0.75;

function firstWords(text: string, n: number): string[] {
  return (text.match(/\S+/g) ?? []).slice(0, n);
}

/** Pads `text` with filler words to `words` words. */
function padTo(text: string, words: number): string {
  const out: string[] = firstWords(text, Infinity);
  for (let i = 0; out.length < words; i++) out.push(FILLER_WORDS[i % FILLER_WORDS.length]!);
  return out.join(' ');
}

/** The untruncated plain reply for a user text; `choice` shifts the padding. */
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

function applyLimits(full: string, stop: readonly string[], maxTokens: number | undefined): Pick<ReplyPlan, 'text' | 'finish' | 'stopSequence'> {
  let at = -1;
  let hit: string | undefined;
  for (const seq of stop) {
    const i = seq ? full.indexOf(seq) : -1;
    if (i !== -1 && (at === -1 || i < at)) [at, hit] = [i, seq];
  }
  const text = hit === undefined ? full : full.slice(0, at);
  // The limit wins when it bites before the stop sequence would have been generated.
  if (maxTokens !== undefined && countWords(text) > maxTokens) return { text: firstNWords(text, maxTokens), finish: 'length' };
  return hit === undefined ? { text, finish: 'stop' } : { text, finish: 'stop_sequence', stopSequence: hit };
}

function reasoningFor(conv: Conversation, calls: readonly ToolCallPlan[]): string {
  if (calls.length > 0) return `Thinking: I should call ${calls.map((c) => c.name).join(' and ')}.`;
  if (conv.lastTurn.kind === 'tool-result') return 'Thinking: the tool returned a result; I will report it.';
  return `Thinking: the user wrote ${firstWords(conv.lastUserText, ECHO_WORDS).join(' ') || 'nothing'}; I will echo it back.`;
}

/** Plan the reply to `conv` (pure); `choice`: which of several choices (0-based). */
export function planReply(conv: Conversation, opts: { replyWords: number; choice?: number }): ReplyPlan {
  const turn = conv.lastTurn;
  const marked = (marker: string): boolean => conv.lastUserText.includes(marker);
  const runaway = marked('[runaway]');
  const tools = turn.kind === 'user' ? toolsAskedFor(conv.tools, turn.text, conv.toolForced === true) : [];
  const calls = tools.map((tool) => {
    const args = argsFor(tool, turn.kind === 'user' ? turn.text : '');
    return { name: tool.name, args, argsJson: JSON.stringify(args) };
  });
  const reasoning = conv.reasoning ? (runaway ? padTo(reasoningFor(conv, calls), RUNAWAY_WORDS) : reasoningFor(conv, calls)) : undefined;
  const reasoningTokens = reasoning ? countWords(reasoning) : 0;
  let plan: ReplyPlan;
  if (calls.length > 0) {
    const callWords = calls.reduce((sum, c) => sum + countWords(`${c.name} ${c.argsJson}`), 0);
    plan = { promptTokens: 0, reasoning, reasoningTokens, text: '', toolCalls: calls, finish: 'tool_calls', completionTokens: callWords + reasoningTokens };
  } else {
    const plain =
      turn.kind === 'tool-result'
        ? `Tool said: ${turn.results.join('; ')}`
        : baseReplyText(
            turn.kind === 'user' ? turn.text : conv.lastUserText,
            turn.kind === 'user' ? turn.images : 0,
            runaway ? RUNAWAY_WORDS : opts.replyWords,
            opts.choice ?? 0,
          );
    const limited = applyLimits(conv.json === undefined ? plain : structuredAnswer(conv.json.schema, plain), conv.stop, runaway ? undefined : conv.maxTokens);
    plan = { promptTokens: 0, reasoning, reasoningTokens, toolCalls: [], ...limited, completionTokens: countWords(limited.text) + reasoningTokens };
  }
  const prompt = promptTokens(conv.messageTexts);
  if (marked('[overreport]')) return { ...plan, promptTokens: prompt * OVERREPORT_FACTOR, completionTokens: plan.completionTokens * OVERREPORT_FACTOR };
  return { ...plan, promptTokens: prompt, ...(marked('[cached]') ? { cachedTokens: Math.floor(prompt * CACHED_SHARE) } : {}) };
}

/** One plan per choice (`count` ≥ 1): choice 0 is the single-choice reply. */
export function planChoices(conv: Conversation, opts: { replyWords: number }, count: number): ReplyPlan[] {
  return Array.from({ length: Math.max(1, count) }, (_, choice) => planReply(conv, { ...opts, choice }));
}

/**
 * Compact form of a tool result: re-serialised JSON if it parses, else its first non-blank line
 * (of the command's output, after Codex's `Output:` line, when there is one), whitespace collapsed.
 */
export function compactResult(content: string): string {
  try {
    return JSON.stringify(JSON.parse(content));
  } catch {
    const lines = content.split('\n');
    const output = lines.findIndex((l) => l.trim() === 'Output:');
    const line = lines.slice(output + 1).find((l) => l.trim() !== '') ?? '';
    return line.replace(/\s+/g, ' ').trim();
  }
}
