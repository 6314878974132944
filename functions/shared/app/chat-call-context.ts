import type { GatewayRequest } from '../http/types';
import type { RequestBill } from '../billing/request-bill';
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { ChatSurface } from './chat-surface';

/**
 * What one chat exchange carries from admission to its answer (buffered or streamed): the request,
 * the validated body, the open bill, and how its API presents a buffered answer.
 */
export interface CallContext {
  req: GatewayRequest;
  body: ChatCompletionRequest;
  bill: RequestBill;
  /** Unix seconds, the same on every chunk (OpenAI: "each chunk has the same created"). */
  created: number;
  /** How the client's API writes the answer (the completion and its chunks, a Messages answer and its events, …). */
  surface: ChatSurface;
}

/** `chatcmpl-` + our request id: the completion id and the ledger key name the same request. */
export function completionId(requestId: string): string {
  return `chatcmpl-${requestId}`;
}

/** nano-USD → USD as a JSON number (`usage.cost`). */
export function usdOf(nanoUsd: number): number {
  return nanoUsd / 1e9;
}
