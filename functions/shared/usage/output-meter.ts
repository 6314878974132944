/**
 * The output budget of one answer: what its hold reserved for output (billing/hold-demand.ts: `n` × the
 * output limit, plus a predicted output's bound), counted while the answer streams in. Every upstream
 * is sent that limit, but not every one keeps to it (reasoning and tool-call arguments past
 * `max_tokens`, provider bugs, a hostile or broken host): the router cuts the answer where the budget
 * runs out, ends every unfinished choice with `finish_reason: "length"` as an upstream at its limit
 * does, and stops the upstream request (routing/fallback-router.ts). The settle caps the bill at the
 * hold in any case (billing/settle.ts); this stops the generation the platform would pay for, and keeps
 * the answer the client receives within what it was held for.
 *
 * Counted: content, reasoning, refusal, tool-call names and arguments (function and custom), of every
 * choice, together. Counter: our o200k tokenizer (usage/estimate.ts) once it is loaded (after a
 * container's first answer: loading it takes the CPU for ~0.5 s, which must not stall the streams in
 * flight) and characters / 4 until then. Other providers' tokenizers count the
 * same text differently (o200k is among the most economical, and a word-counting host differs more),
 * so an honest answer that stopped at its own limit could count a little more here: the cut comes at
 * the budget plus the prompt's margin ({@link OUTPUT_MARGIN_PERCENT}% + {@link OUTPUT_MARGIN_TOKENS}
 * tokens, billing/hold-demand.ts), never cutting an answer its upstream kept within its limit, and
 * bounding one that is not to a few tokens past it. The delivered output never passes that limit by
 * our count: the piece that would cross it is cut to a prefix that fits. What it passes the budget by
 * is billed up to the hold (billing/settle.ts: the rest is the platform's loss).
 */
import type { ChunkChoice, ChunkDelta, ChunkParts, ToolCallDelta } from '../openai/chat-response';
import { loadedCounter, utf8TokenBound } from './estimate';

/**
 * The longest token of the tokenizers we count with, in UTF-8 bytes (o200k's longest entries are
 * well under it): a text longer than (n + 1) × this has more than n tokens, without counting it.
 */
const MAX_TOKEN_BYTES = 256;
/** The longest prefix a cut piece keeps, in characters per token left (a cut runs in O(log) short counts). */
const MAX_PREFIX_CHARS_PER_TOKEN = 16;
/** Characters per token of the counter used before the tokenizer is loaded. */
const CHARS_PER_TOKEN = 4;
/** The cut comes at the budget × this percentage + {@link OUTPUT_MARGIN_TOKENS} (the prompt margin of holds). */
export const OUTPUT_MARGIN_PERCENT = 135;
export const OUTPUT_MARGIN_TOKENS = 16;

/** Where a meter of `budget` output tokens cuts the answer (tokens, our count). */
export function outputCutAt(budget: number): number {
  return Math.ceil((budget * OUTPUT_MARGIN_PERCENT) / 100) + OUTPUT_MARGIN_TOKENS;
}

/** One answer's output counter (see the module comment). */
export interface OutputMeter {
  /**
   * Counts a batch of parts and returns what of it fits the budget. The batch that crosses it comes
   * back cut, followed by one part that ends every unfinished choice with `length` (its usage, if any,
   * is dropped: it would not be the final count); after that, {@link spent} is true.
   */
  admit(batch: readonly ChunkParts[]): ChunkParts[];
  /** The budget ran out: stop reading the upstream. */
  readonly spent: boolean;
  /** Output tokens counted so far (≤ {@link outputCutAt} the budget). */
  readonly counted: number;
}

type Count = (text: string) => number;

function counter(): Count {
  const loaded = loadedCounter();
  return loaded ?? ((text) => Math.ceil(text.length / CHARS_PER_TOKEN));
}

/**
 * The longest prefix of `text` (whole code points) of at most `tokens` tokens: a binary search over its
 * length, up to {@link MAX_PREFIX_CHARS_PER_TOKEN} characters per token (O(log) counts of short texts).
 */
function prefixWithin(text: string, tokens: number, count: Count): string {
  if (tokens <= 0) return '';
  let lo = 0;
  let hi = Math.min(text.length, tokens * MAX_PREFIX_CHARS_PER_TOKEN);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(codePointPrefix(text, mid)) <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return codePointPrefix(text, lo);
}

/** The pieces of text the meter counts, in the order {@link Meter} counts them (empty ones left out). */
function textsOf(batch: readonly ChunkParts[]): string[] {
  const out: string[] = [];
  const add = (t: string | null | undefined): void => void (t ? out.push(t) : undefined);
  for (const parts of batch)
    for (const { delta: d } of parts.choices) {
      add(d.reasoning_content);
      add(d.content);
      add(d.refusal);
      for (const call of d.tool_calls ?? []) {
        add(call.function?.name);
        add(call.function?.arguments);
        add(call.custom?.name);
        add(call.custom?.input);
      }
    }
  return out;
}

function codePointPrefix(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const code = text.charCodeAt(chars - 1);
  // Never split a surrogate pair.
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? chars - 1 : chars);
}

/**
 * A meter of `budget` output tokens (≥ 0: what the hold covers) for an answer of `choices` choices (`n`;
 * the choices that get `length` when it runs out before they finished). It cuts at {@link outputCutAt}.
 */
export function outputMeter(budget: number, choices: number): OutputMeter {
  return new Meter(outputCutAt(budget), choices);
}

/**
 * Counting is lazy while the answer is far from its limit: a batch whose texts' UTF-8 bound (a strict
 * upper bound on their tokens, usage/estimate.ts) still fits what is left is passed through as it is
 * (no copy) and its texts are only remembered; they are counted together when a batch no longer fits
 * by that bound, or when {@link counted} is read. So an answer that ends well within its budget, the
 * common case, is never tokenized here; the batch that may cross the limit is counted piece by piece.
 */
class Meter implements OutputMeter {
  spent = false;
  /** Tokens of the pieces counted so far. */
  private exact = 0;
  /** Pieces admitted by their bound, not yet counted, and the sum of their bounds. */
  private pending: string[] = [];
  private pendingBound = 0;
  private readonly finished = new Set<number>();

  constructor(
    private readonly limit: number,
    private readonly choices: number,
  ) {}

  get counted(): number {
    this.countPending();
    return this.exact;
  }

  admit(batch: readonly ChunkParts[]): ChunkParts[] {
    if (this.spent) return [];
    const texts = textsOf(batch);
    let bound = 0;
    for (const t of texts) bound += utf8TokenBound(t);
    if (this.exact + this.pendingBound + bound > this.limit) this.countPending();
    if (this.exact + this.pendingBound + bound <= this.limit) {
      for (const t of texts) this.pending.push(t);
      this.pendingBound += bound;
      for (const parts of batch) for (const c of parts.choices) if (c.finish_reason !== null) this.finished.add(c.index);
      return batch as ChunkParts[];
    }
    return this.admitCounting(batch);
  }

  /**
   * Counts the pieces admitted by their bound, joined in arrival order as the upstream produced them
   * (one call of the counter of now, the tokenizer once loaded: ~5× cheaper than a call per piece).
   */
  private countPending(): void {
    if (this.pending.length === 0) return;
    this.exact += counter()(this.pending.join(''));
    this.pending = [];
    this.pendingBound = 0;
  }

  /** The batch that may cross the limit: every piece counted, the crossing one cut. */
  private admitCounting(batch: readonly ChunkParts[]): ChunkParts[] {
    const out: ChunkParts[] = [];
    for (const parts of batch) {
      const admitted: ChunkChoice[] = [];
      for (const choice of parts.choices) {
        admitted.push(this.admitChoice(choice));
        if (this.spent) break; // the choices after the one that crossed the budget get nothing more
      }
      if (!this.spent) {
        out.push({ ...parts, choices: admitted });
        continue;
      }
      const { usage: _partial, ...rest } = parts;
      out.push({ ...rest, choices: admitted });
      const open = Array.from({ length: Math.max(1, this.choices) }, (_, index) => index).filter((index) => !this.finished.has(index));
      out.push({ choices: open.map((index) => ({ index, delta: {}, finish_reason: 'length' })) });
      break;
    }
    return out;
  }

  /** Counts one piece of text; returns it, or the prefix that fits when it crosses the limit (undefined once spent). */
  private take(text: string | undefined): string | undefined {
    if (this.spent) return undefined;
    if (text === undefined || text === '') return text;
    const left = this.limit - this.exact;
    const count = counter();
    const tokens = utf8TokenBound(text) > (left + 1) * MAX_TOKEN_BYTES ? Number.POSITIVE_INFINITY : count(text);
    if (tokens <= left) {
      this.exact += tokens;
      return text;
    }
    this.spent = true;
    const cut = prefixWithin(text, left, count);
    this.exact += cut === '' ? 0 : Math.min(left, count(cut));
    return cut;
  }

  private admitChoice(choice: ChunkChoice): ChunkChoice {
    const d = choice.delta;
    const delta: ChunkDelta = { ...d };
    for (const field of ['reasoning_content', 'content', 'refusal'] as const) {
      const text = d[field];
      if (text === undefined || text === null) continue;
      const kept = this.take(text);
      if (kept === undefined) delete delta[field];
      else delta[field] = kept;
    }
    if (d.tool_calls !== undefined) {
      const calls = this.admitToolCalls(d.tool_calls);
      if (calls.length > 0) delta.tool_calls = calls;
      else delete delta.tool_calls;
    }
    if (!this.spent) {
      if (choice.finish_reason !== null) this.finished.add(choice.index);
      return { ...choice, delta };
    }
    const { logprobs: _dropped, ...rest } = choice; // the logprobs described the uncut piece
    return { ...rest, delta, finish_reason: null };
  }

  private admitToolCalls(calls: readonly ToolCallDelta[]): ToolCallDelta[] {
    const out: ToolCallDelta[] = [];
    for (const call of calls) {
      if (this.spent) break;
      const fn = call.function === undefined ? undefined : this.admitCall(call.function.name, call.function.arguments);
      const custom = call.custom === undefined || this.spent ? undefined : this.admitCall(call.custom.name, call.custom.input);
      if (fn === 'cut-name' || custom === 'cut-name') break; // a cut name is no call
      const { function: fnIn, custom: customIn, ...kept } = call;
      const next: ToolCallDelta = kept;
      if (fnIn !== undefined && fn !== undefined) {
        const { name: _name, arguments: _arguments, ...other } = fnIn;
        next.function = { ...other, ...fn.parts('arguments') };
      }
      if (customIn !== undefined && custom !== undefined) {
        const { name: _name, input: _input, ...other } = customIn;
        next.custom = { ...other, ...custom.parts('input') };
      }
      out.push(next);
    }
    return out;
  }

  /** A tool call's name and body pieces, as admitted; 'cut-name' when the limit falls inside the name. */
  private admitCall(name: string | undefined, body: string | undefined): 'cut-name' | { parts(bodyField: string): Record<string, string> } {
    const keptName = this.take(name);
    if (this.spent && name !== undefined && keptName !== name) return 'cut-name';
    const keptBody = this.take(body);
    return { parts: (bodyField) => ({ ...(keptName !== undefined ? { name: keptName } : {}), ...(keptBody !== undefined ? { [bodyField]: keptBody } : {}) }) };
  }
}
