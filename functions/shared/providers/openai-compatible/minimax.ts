import type { ChatCompletionRequest } from '../../openai/chat-request';
import type { UpstreamFailure } from '../types';
import { refuseSeveralChoices } from '../unsupported-parameters';
import { contentPolicyFailure, kindForStatus, makeFailure } from '../upstream-failure';
import type { UpstreamBody } from './adapter';
import { withoutReasoning, type ReasoningReplay } from './history';

/**
 * What MiniMax's OpenAI-compatible API (providers.md §5) does differently: temperature range,
 * reasoning apart from the answer and back again in tool loops, errors inside a 200.
 */

/**
 * MiniMax takes temperature in (0, 1] only (§5.1): 0 is refused, so the smallest step is sent.
 * `reasoning_split: true` moves reasoning out of `<think>` tags into `reasoning_details` (§5.2).
 * @throws InvalidRequestError (400 `unsupported_parameter`) for `n > 1`: MiniMax's `n` must be 1 (§5.1).
 */
export function miniMaxAdjust(body: UpstreamBody, req: ChatCompletionRequest): void {
  refuseSeveralChoices(req);
  const t = body.temperature;
  if (typeof t === 'number') body.temperature = Math.min(1, Math.max(0.01, t));
  body.reasoning_split = true;
}

/**
 * One `reasoning_details` element, as MiniMax sends it with `reasoning_split` (§5.2):
 * `{type:"reasoning.text", id:"reasoning-text-1", format:"MiniMax-response-v1", index:0, text}`.
 */
export interface MiniMaxReasoningDetail {
  type: 'reasoning.text';
  id: string;
  format: 'MiniMax-response-v1';
  index: number;
  text: string;
}

/**
 * MiniMax wants an assistant message's reasoning passed back in tool loops (interleaved thinking,
 * §5.2). We returned it to the client as `reasoning_content` (joined from `reasoning_details`), so an
 * echoed `reasoning_content` becomes one `reasoning_details` element in MiniMax's own shape again.
 * Every assistant message gets it: MiniMax asks for the full messages back unchanged.
 */
export const replayMiniMaxReasoning: ReasoningReplay = (m) => {
  const text = m.reasoning_content;
  const rest = withoutReasoning(m);
  if (text == null || text === '') return rest;
  const detail: MiniMaxReasoningDetail = { type: 'reasoning.text', id: 'reasoning-text-1', format: 'MiniMax-response-v1', index: 0, text };
  return { ...rest, reasoning_details: [detail] };
};

/**
 * MiniMax may report an error inside an HTTP 200 as `base_resp.status_code != 0` (§5.4). Codes:
 * 1000 unknown, 1001 timeout, 1002 rate limit, 1004 not authorised, 1008 insufficient balance,
 * 1026/1027 sensitive content (input / output), 2013 invalid parameters.
 * @returns the verdict, or undefined when the body carries no error.
 */
export function miniMaxErrorInBody(body: unknown): UpstreamFailure | undefined {
  if (typeof body !== 'object' || body === null || !('base_resp' in body)) return undefined;
  const br = (body as { base_resp?: { status_code?: unknown; status_msg?: unknown } | null }).base_resp;
  const code = typeof br?.status_code === 'number' ? br.status_code : 0;
  if (code === 0) return undefined;
  const detail = typeof br?.status_msg === 'string' ? br.status_msg : 'error';
  const message = `minimax: ${detail} (base_resp ${code})`;
  switch (code) {
    case 1002:
      return makeFailure('rate-limit', 429, message);
    case 1001:
      return makeFailure('timeout', 504, message);
    case 1004:
    case 1008:
      return makeFailure('auth-config', 401, message);
    case 1026:
    case 1027:
      // The content itself was refused: another model would only route around the policy.
      return contentPolicyFailure(
        400,
        `The ${code === 1026 ? 'request' : 'response'} was flagged as sensitive content by the upstream model's content policy (MiniMax base_resp ${code}: ${detail}).`,
      );
    case 2013:
      return makeFailure('client', 400, message);
    default:
      return makeFailure(kindForStatus(500), 500, message);
  }
}
