import type { GatewayRequest } from '../http/types';
import type { RequestBill } from '../billing/request-bill';
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { ChatCompletion } from '../openai/chat-response';

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
  /** The buffered answer's body as its API shows it (the completion itself, or a Responses `response`). */
  present: (completion: ChatCompletion) => unknown;
}

/** `chatcmpl-` + our request id: the completion id and the ledger key name the same request. */
export function completionId(requestId: string): string {
  return `chatcmpl-${requestId}`;
}

/** nano-USD → USD as a JSON number (`usage.cost`). */
export function usdOf(nanoUsd: number): number {
  return nanoUsd / 1e9;
}
