import type { MessageToolCall } from './chat-tools';
import type {
  AssistantMessage,
  ChunkChoice,
  ChunkParts,
  CompletionChoice,
  CompletionParts,
  FinishReason,
  ToolCallDelta,
  UpstreamEventText,
} from './chat-response';
import type { TokenUsage } from '../usage/token-usage';

/**
 * Builds the parts of a `chat.completion` from the parts of a stream, so a buffered answer can be
 * produced by a streamed upstream call (routing/fallback-router.ts) and still be exactly what the
 * upstream's own buffered answer would have given (test/openai/completion-assembler.test.ts replays
 * the same answer both ways, per provider):
 *
 * - choices by `index`, in index order (`n > 1`, Gemini candidates);
 * - `content`: the content deltas joined. When none carried text (a role preamble's `""` does not
 *   count), `null` beside tool calls or a refusal and `""` otherwise — OpenAI's, Gemini's and the
 *   OpenAI-compatible hosts' own buffered convention — or always `null` where the upstream's buffered
 *   answer has no text blocks (Anthropic, {@link AssemblyRules.contentWithoutText});
 * - `refusal` joined (null when none), `reasoning_content` joined (absent when none);
 * - `tool_calls` merged by their `index`: id, type, name and extra content from the fragments that
 *   carry them, `arguments` (custom tools: `input`) concatenated — as the openai SDK's stream helper
 *   does — then, where the upstream's buffered API returns arguments as an object that the adapter
 *   serialises (Anthropic `input`), re-serialised the same way ({@link AssemblyRules.toolArguments});
 * - `logprobs`: each chunk's `content` and `refusal` token lists concatenated (null when never sent);
 * - `finish_reason`: the last one sent (`stop` if none); `usage` and `system_fingerprint`: the last sent.
 */

/** Where an upstream's buffered answer differs from the plain concatenation of its stream. */
export interface AssemblyRules {
  /**
   * `compact-json`: the buffered answer gives tool arguments as a JSON value the adapter serialises
   * with `JSON.stringify` (Anthropic `tool_use.input`; an empty input is `{}`), while the stream sends
   * the model's own JSON text. Default `as-streamed`.
   */
  toolArguments?: 'as-streamed' | 'compact-json';
  /** `null`: no text means `content: null` (Anthropic). Default: null beside tool calls or a refusal, else `""`. */
  contentWithoutText?: 'null' | 'null-beside-calls';
}

/** Accumulates stream parts; `result()` gives the completion parts. */
export interface CompletionAssembler {
  push(parts: readonly ChunkParts[]): void;
  result(): CompletionParts;
}

interface ToolCallState {
  id?: string;
  type?: 'function' | 'custom';
  name?: string;
  input: string;
  extra?: ToolCallDelta['extra_content'];
}

interface ChoiceState {
  content: string;
  sawContent: boolean;
  refusal: string;
  reasoning: string;
  calls: Map<number, ToolCallState>;
  finish: FinishReason | null;
  logprobs: { content: unknown[] | null; refusal: unknown[] | null } | null;
}

/**
 * A fresh assembler for one stream.
 * @param keepUpstreamEvents keep the parts' verbatim upstream events (`CompletionParts.upstreamEvents`),
 *   for a surface that answers in the upstream's own protocol.
 */
export function createCompletionAssembler(rules: AssemblyRules = {}, keepUpstreamEvents = false): CompletionAssembler {
  const choices = new Map<number, ChoiceState>();
  const upstreamEvents: UpstreamEventText[] = [];
  let usage: TokenUsage | undefined;
  let fingerprint: string | undefined;

  function choice(index: number): ChoiceState {
    let c = choices.get(index);
    if (c === undefined) {
      c = { content: '', sawContent: false, refusal: '', reasoning: '', calls: new Map(), finish: null, logprobs: null };
      choices.set(index, c);
    }
    return c;
  }

  function pushChoice(ch: ChunkChoice): void {
    const c = choice(ch.index);
    const d = ch.delta;
    // A role preamble's empty content says nothing about the answer's text.
    if (typeof d.content === 'string' && !(d.role !== undefined && d.content === '')) {
      c.content += d.content;
      c.sawContent = true;
    }
    if (typeof d.refusal === 'string') c.refusal += d.refusal;
    if (d.reasoning_content !== undefined) c.reasoning += d.reasoning_content;
    for (const t of d.tool_calls ?? []) mergeToolCall(c.calls, t);
    if (ch.finish_reason !== null) c.finish = ch.finish_reason;
    if (ch.logprobs != null && typeof ch.logprobs === 'object') c.logprobs = mergeLogprobs(c.logprobs, ch.logprobs as Record<string, unknown>);
  }

  return {
    push(parts) {
      for (const p of parts) {
        for (const ch of p.choices) pushChoice(ch);
        if (p.usage !== undefined) usage = p.usage;
        if (p.system_fingerprint != null) fingerprint = p.system_fingerprint;
        if (keepUpstreamEvents && p.upstreamEvent !== undefined) upstreamEvents.push(p.upstreamEvent);
      }
    },
    result() {
      const out: CompletionParts = {
        choices: [...choices.entries()].sort(([a], [b]) => a - b).map(([index, c]) => toChoice(index, c, rules)),
        usage,
      };
      if (fingerprint !== undefined) out.system_fingerprint = fingerprint;
      if (upstreamEvents.length > 0) out.upstreamEvents = upstreamEvents;
      return out;
    },
  };
}

function mergeToolCall(calls: Map<number, ToolCallState>, t: ToolCallDelta): void {
  let s = calls.get(t.index);
  if (s === undefined) {
    s = { input: '' };
    calls.set(t.index, s);
  }
  if (t.id !== undefined && t.id !== '') s.id = t.id;
  if (t.type !== undefined) s.type = t.type;
  if (t.custom !== undefined) s.type = 'custom';
  const name = t.function?.name ?? t.custom?.name;
  if (name !== undefined && name !== '') s.name = name;
  s.input += t.function?.arguments ?? t.custom?.input ?? '';
  if (t.extra_content !== undefined && s.extra === undefined) s.extra = t.extra_content;
}

function mergeLogprobs(acc: ChoiceState['logprobs'], lp: Record<string, unknown>): NonNullable<ChoiceState['logprobs']> {
  const out = acc ?? { content: null, refusal: null };
  for (const key of ['content', 'refusal'] as const) {
    const tokens = lp[key];
    if (Array.isArray(tokens)) out[key] = [...(out[key] ?? []), ...(tokens as unknown[])];
  }
  return out;
}

function toChoice(index: number, c: ChoiceState, rules: AssemblyRules): CompletionChoice {
  const calls = [...c.calls.entries()].sort(([a], [b]) => a - b).map(([, s], j) => toToolCall(s, `call_${index}_${j}`, rules));
  const refusal = c.refusal === '' ? null : c.refusal;
  let content: string | null = c.content;
  if (!c.sawContent) content = rules.contentWithoutText === 'null' || calls.length > 0 || refusal !== null ? null : '';
  const message: AssistantMessage = { role: 'assistant', content, refusal };
  if (c.reasoning !== '') message.reasoning_content = c.reasoning;
  if (calls.length > 0) message.tool_calls = calls;
  return { index, message, logprobs: c.logprobs, finish_reason: c.finish ?? 'stop' };
}

function toToolCall(s: ToolCallState, fallbackId: string, rules: AssemblyRules): MessageToolCall {
  const id = s.id ?? fallbackId;
  if (s.type === 'custom') return { id, type: 'custom', custom: { name: s.name ?? '', input: s.input } };
  const call: MessageToolCall = {
    id,
    type: 'function',
    function: { name: s.name ?? '', arguments: rules.toolArguments === 'compact-json' ? compactJson(s.input) : s.input },
  };
  if (s.extra !== undefined) call.extra_content = s.extra;
  return call;
}

/** The JSON text re-serialised compactly (`""` is an empty object); text that is not JSON is kept as is. */
function compactJson(text: string): string {
  if (text.trim() === '') return '{}';
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}
