import type { ChunkChoice, ChunkDelta, ChunkParts, ToolCallDelta } from '../../openai/chat-response';
import type { AdapterContext, StreamTransform, UpstreamFailure, UpstreamSseEvent } from '../types';
import { UpstreamAttemptError } from '../types';
import { isContentPolicyFailure, makeFailure, parseUpstreamJson } from '../upstream-failure';
import { fastChunk } from './chunk-fast-path';
import { chatChunkBody, joinReasoningDetails, mapFinishReason, mapUsage } from './wire';

/**
 * OpenAI-style SSE (`data: {chunk}` … `data: [DONE]`, providers.md §1.4) → chunk parts.
 * A `data: {"error":…}` payload — how OpenAI-compatible upstreams report a failure after the 200 —
 * and a stream that ends before any `finish_reason` both throw, so a cut is never passed on as a
 * normal end.
 *
 * A content-policy refusal inside the stream (MiniMax `base_resp` 1026/1027, providers.md §5.4) throws
 * the client's 400 while nothing has been emitted but the role preamble; once output has gone out it
 * ends the stream the way OpenAI does, with `finish_reason: "content_filter"`.
 *
 * Several choices (`n > 1`) interleave, each keyed by its `index`: the stream is complete only when
 * every choice it started has its `finish_reason`. A choice's `logprobs` (the client asked for them)
 * is passed on as received; the `null` sent when nobody asked is left out, which the SDK reads alike.
 * The chunks' `system_fingerprint` is passed on once, on the first part after it appears or changes.
 */
export function createOpenAIStreamTransform(ctx: AdapterContext, errorInBody?: (body: unknown) => UpstreamFailure | undefined): StreamTransform {
  /** Choice indexes seen, and those still without a finish_reason. */
  const started = new Set<number>();
  const unfinished = new Set<number>();
  const finished = (): boolean => started.size > 0 && unfinished.size === 0;
  let done = false;
  /** Content, reasoning or a tool call has been emitted (the client's 200 may be under way). */
  let sentOutput = false;
  /** The last `system_fingerprint` passed on. */
  let fingerprint: string | undefined;
  const provider = ctx.endpoint.provider;

  return {
    push(event: UpstreamSseEvent): ChunkParts[] {
      if (event.data === '[DONE]') {
        done = true;
        return [];
      }
      if (done) return [];
      const json = parseUpstreamJson(event.data, `${provider}: malformed stream event`);
      const inBody = errorInBody?.(json);
      if (inBody && isContentPolicyFailure(inBody) && sentOutput && !finished()) {
        done = true;
        const open = [...unfinished];
        unfinished.clear();
        return [{ choices: open.map((index) => ({ index, delta: {}, finish_reason: 'content_filter' as const })) }];
      }
      if (inBody) throw new UpstreamAttemptError(inBody);
      let chunk = fastChunk(json);
      if (chunk === undefined) {
        const parsed = chatChunkBody.safeParse(json);
        if (!parsed.success) throw new UpstreamAttemptError(makeFailure('server', 200, `${provider}: malformed stream chunk`));
        chunk = parsed.data;
      }
      if (chunk.error !== undefined) {
        throw new UpstreamAttemptError(makeFailure('server', 200, `${provider}: error event in stream`));
      }
      const choices: ChunkChoice[] = (chunk.choices ?? []).map((c, i) => {
        const index = c.index ?? i;
        const finish = mapFinishReason(c.finish_reason);
        if (!started.has(index)) {
          started.add(index);
          unfinished.add(index);
        }
        if (finish !== null) unfinished.delete(index);
        const delta = toDelta(c.delta);
        if (delta.content || delta.reasoning_content || delta.refusal || delta.tool_calls) sentOutput = true;
        const choice: ChunkChoice = { index, delta, finish_reason: finish };
        if (c.logprobs != null) choice.logprobs = c.logprobs;
        return choice;
      });
      const usage = mapUsage(chunk.usage ?? chunk.x_groq?.usage);
      if (choices.length === 0 && usage === undefined) return [];
      const part: ChunkParts = usage === undefined ? { choices } : { choices, usage };
      // Said once, when it first appears (or changes): an assembled buffered answer carries it.
      if (chunk.system_fingerprint != null && chunk.system_fingerprint !== fingerprint) {
        fingerprint = chunk.system_fingerprint;
        part.system_fingerprint = fingerprint;
      }
      return [part];
    },

    end(): ChunkParts[] {
      if (!finished()) {
        throw new UpstreamAttemptError(makeFailure('server', 200, `${provider}: stream ended before a finish_reason`));
      }
      return [];
    },
  };
}

type UpstreamDelta = NonNullable<NonNullable<ReturnType<typeof chatChunkBody.parse>['choices']>[number]['delta']>;

function toDelta(d: UpstreamDelta | null | undefined): ChunkDelta {
  const out: ChunkDelta = {};
  if (d == null) return out;
  if (d.role === 'assistant') out.role = 'assistant';
  if (d.content != null) out.content = d.content;
  if (d.refusal != null) out.refusal = d.refusal;
  const reasoning = d.reasoning_content ?? joinReasoningDetails(d.reasoning_details);
  if (reasoning != null && reasoning !== '') out.reasoning_content = reasoning;
  if (d.tool_calls != null && d.tool_calls.length > 0) {
    out.tool_calls = d.tool_calls.map((t, i): ToolCallDelta => {
      const call: ToolCallDelta = { index: t.index ?? i };
      if (t.id != null) call.id = t.id;
      if (t.type != null || t.id != null) call.type = t.type === 'custom' ? 'custom' : 'function';
      if (t.function != null) {
        call.function = {};
        if (t.function.name != null) call.function.name = t.function.name;
        if (t.function.arguments != null) call.function.arguments = t.function.arguments;
      }
      if (t.custom != null) {
        call.custom = {};
        if (t.custom.name != null) call.custom.name = t.custom.name;
        if (t.custom.input != null) call.custom.input = t.custom.input;
      }
      return call;
    });
  }
  return out;
}
