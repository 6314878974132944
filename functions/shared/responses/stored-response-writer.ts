import { logger } from '../observability/logger';
import type { CreateResponseRequest, InputItem } from './request';
import type { ResponseObject } from './response-object';
import { putStoredResponse } from './response-store';
import { RESPONSE_RETENTION_DAYS } from './store-settings';

/** Writes one finished response to the store (see {@link responseSaver}). */
export type SaveResponse = (response: ResponseObject) => Promise<void>;

/**
 * How a request's finished response is stored, or undefined when it is not: `store: false`, or
 * storage turned off for the deployment (RESPONSE_RETENTION_DAYS=0). OpenAI's default is to store.
 *
 * The returned function is awaited before the client gets the response (buffered: before the body;
 * streamed: before `response.completed` / `.incomplete` / `.failed`), so a client that sends the next
 * turn at once always finds it. It never throws: when DynamoDB refuses, the answer — produced and
 * billed — still goes out, a warning is logged (ids and the error's name only, never content), and
 * later references to it are answered as for an unstored response.
 * @param input what to store as the response's input (conversation-state.ts `stored`).
 * @param retentionDays how long it is kept (default RESPONSE_RETENTION_DAYS; 0 = not stored).
 */
export function responseSaver(accountId: string, body: Pick<CreateResponseRequest, 'store'>, input: readonly InputItem[], requestId: string, retentionDays = RESPONSE_RETENTION_DAYS): SaveResponse | undefined {
  if (body.store === false || retentionDays === 0) return undefined;
  return async (response) => {
    try {
      const outcome = await putStoredResponse(accountId, response, input, retentionDays);
      if (outcome !== 'stored') logger.warn('response stored only in part: over the size bound', { requestId, responseId: response.id, outcome });
    } catch (err) {
      logger.warn('response not stored', { requestId, responseId: response.id, error: (err as { name?: string }).name ?? 'unknown' });
    }
  };
}
