import type { GatewayRequest, GatewayResult, JsonResult, SseFrame } from '../http/types';
import { asGatewayError } from '../errors/gateway-errors';
import { logger } from '../observability/logger';
import { parseJsonBody } from '../openai/parse-body';
import { messagesErrorBody, messagesErrorEvent, messagesErrorKind } from '../messages/errors';
import { messageFromEvents, messageFromParts, messageId, messagesUsage, stopReason } from '../messages/message';
import { resolveMessagesModel } from '../messages/model-names';
import { forwardedHeaders, messagesRequest } from '../messages/request';
import { toChatRequest } from '../messages/to-chat';
import { runChatExchange } from './chat-completions';
import { authenticateRequest } from './guard';
import type { ChunkChoice, ChunkParts, UpstreamEventText, Usage } from '../openai/chat-response';
import type { ChatSurface, StreamEncoder, StreamMeta } from './chat-answer';

/**
 * `POST /v1/messages` (Anthropic's Messages API; `?beta=true` as Claude Code sends it is the same
 * route): authenticate (`x-api-key` or `Authorization: Bearer`) → validate → resolve the model name
 * (messages/model-names.ts) → the chat core's own exchange ({@link runChatExchange}: the same hold,
 * rate and key limits, BYOK, plan, fallback, hedging, breakers, settle and ledger as
 * `/v1/chat/completions`), carrying the original body so a Claude target gets it unchanged
 * (messages/to-chat.ts) → the answer as an Anthropic `Message` or its event stream.
 * Every error is Anthropic's body with Anthropic's status (messages/errors.ts).
 */
export function messages(req: GatewayRequest): Promise<GatewayResult> {
  return inMessagesApi(req, async () => {
    const caller = await authenticateRequest(req);
    const body = parseJsonBody(req.body, messagesRequest);
    const chat = toChatRequest(body, resolveMessagesModel(body.model), forwardedHeaders(req.headers));
    return runChatExchange(req, caller, chat, messagesSurface(req.requestId));
  });
}

/** How the chat core's answer is written on this API. */
export function messagesSurface(requestId: string): ChatSurface {
  const id = messageId(requestId);
  return {
    present: (completion, parts) =>
      parts.upstreamEvents !== undefined
        ? messageFromEvents(parts.upstreamEvents, id, completion.model)
        : messageFromParts(parts, id, completion.model, completion.usage),
    errorBody: (err) => messagesErrorBody(err, requestId),
    streamEncoder: (meta) => messagesStreamEncoder({ ...meta, id }, requestId),
  };
}

/**
 * Runs a route of this API: its result with Anthropic's `request-id` header (the SDKs read it), any
 * error thrown before the answer as Anthropic's error body and status, its headers (`retry-after`,
 * rate-limit headers) kept.
 */
export async function inMessagesApi(req: GatewayRequest, route: () => Promise<GatewayResult>): Promise<GatewayResult> {
  try {
    const result = await route();
    return { ...result, headers: { ...result.headers, 'request-id': req.requestId } };
  } catch (err) {
    const error = asGatewayError(err);
    // As the edge logs the errors it renders (edge/function-url.ts), which this one never reaches.
    if (error.status >= 500) logger.error('request failed', { requestId: req.requestId, path: req.path, status: error.status, error: err as Error });
    else logger.info('request refused', { requestId: req.requestId, path: req.path, status: error.status, code: error.code });
    const result: JsonResult = {
      kind: 'json',
      status: messagesErrorKind(error.status).status,
      headers: { ...error.headers, 'request-id': req.requestId },
      body: messagesErrorBody(error, req.requestId),
    };
    return result;
  }
}

/**
 * The Anthropic Messages event stream (docs/anthropic-messages.md, "Streaming"; Anthropic streaming
 * docs): `message_start`, a `ping`, then per block `content_block_start`, `content_block_delta`
 * (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`), `content_block_stop`, then
 * `message_delta` (stop reason, cumulative usage) and `message_stop`; `event: error` for a failure after
 * the first byte.
 *
 * A Claude upstream's events are written as received (it sent exactly this protocol), with only
 * `message_start`'s `id` and `model` made ours. Any other model's parts are translated: reasoning →
 * a thinking block, content → a text block, each tool call → a tool_use block whose arguments stream
 * as `input_json_delta`; the usage, known at the end, goes in `message_delta`.
 */
export function messagesStreamEncoder(meta: StreamMeta, requestId: string): StreamEncoder {
  let mode: 'native' | 'translated' | undefined;
  const translated = translator(meta);
  return {
    get wantsFinalUsage() {
      return mode !== 'native';
    },
    parts(parts) {
      if (mode === undefined) mode = parts.upstreamEvent !== undefined ? 'native' : parts.choices.length > 0 ? 'translated' : undefined;
      if (mode === 'native') return parts.upstreamEvent === undefined ? [] : [nativeFrame(parts.upstreamEvent, meta)];
      return parts.upstreamEvent === undefined ? translated.parts(parts) : [];
    },
    complete: (usage) => (mode === 'native' ? [] : translated.complete(usage)),
    failed: (err) => [messagesErrorEvent(err, requestId)],
  };
}

/** One upstream event, verbatim but for `message_start`'s id and model. */
function nativeFrame(e: UpstreamEventText, meta: StreamMeta): SseFrame {
  let data = e.data;
  const type = e.event ?? (JSON.parse(data) as { type?: string }).type ?? 'message';
  if (type === 'message_start') {
    const ev = JSON.parse(data) as { message?: Record<string, unknown> };
    data = JSON.stringify({ ...ev, message: { ...ev.message, id: meta.id, model: meta.model } });
  }
  return event(type, data);
}

function event(type: string, data: string): SseFrame {
  return `event: ${type}\ndata: ${data}\n\n`;
}

function json(type: string, payload: Record<string, unknown>): SseFrame {
  return event(type, JSON.stringify({ type, ...payload }));
}

type OpenBlock = { kind: 'text' | 'thinking' } | { kind: 'tool'; callIndex: number };

/** Chat parts → Anthropic events, for a model that is not Claude. */
function translator(meta: StreamMeta): { parts(p: ChunkParts): SseFrame[]; complete(usage: Usage | undefined): SseFrame[] } {
  let started = false;
  let open: OpenBlock | undefined;
  let index = -1;
  let finish: ChunkChoice['finish_reason'] = null;

  const start = (out: SseFrame[], next: OpenBlock, block: Record<string, unknown>): void => {
    close(out);
    open = next;
    index += 1;
    out.push(json('content_block_start', { index, content_block: block }));
  };
  const close = (out: SseFrame[]): void => {
    if (open !== undefined) out.push(json('content_block_stop', { index }));
    open = undefined;
  };
  const delta = (out: SseFrame[], d: Record<string, unknown>): void => void out.push(json('content_block_delta', { index, delta: d }));

  return {
    parts(p) {
      const out: SseFrame[] = [];
      if (!started) {
        started = true;
        const message = {
          id: meta.id,
          type: 'message',
          role: 'assistant',
          model: meta.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: messagesUsage(undefined),
        };
        out.push(json('message_start', { message }), json('ping', {}));
      }
      const choice = p.choices.find((c) => c.index === 0);
      if (choice === undefined) return out;
      const d = choice.delta;
      if (d.reasoning_content) {
        if (open?.kind !== 'thinking') start(out, { kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
        delta(out, { type: 'thinking_delta', thinking: d.reasoning_content });
      }
      const text = (d.content ?? '') || (d.refusal ?? '');
      if (text !== '') {
        if (open?.kind !== 'text') start(out, { kind: 'text' }, { type: 'text', text: '' });
        delta(out, { type: 'text_delta', text });
      }
      for (const t of d.tool_calls ?? []) {
        if (open?.kind !== 'tool' || open.callIndex !== t.index) {
          start(
            out,
            { kind: 'tool', callIndex: t.index },
            { type: 'tool_use', id: t.id ?? `toolu_${meta.id}_${t.index}`, name: t.function?.name ?? t.custom?.name ?? '', input: {} },
          );
        }
        const piece = t.function?.arguments ?? t.custom?.input ?? '';
        if (piece !== '') delta(out, { type: 'input_json_delta', partial_json: piece });
      }
      if (choice.finish_reason !== null) finish = choice.finish_reason;
      return out;
    },
    complete(usage) {
      const out: SseFrame[] = [];
      close(out);
      const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens } = messagesUsage(usage);
      out.push(
        json('message_delta', {
          delta: { stop_reason: stopReason(finish), stop_sequence: null },
          usage: { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens },
        }),
        json('message_stop', {}),
      );
      return out;
    },
  };
}
