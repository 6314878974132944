import { logger } from '../observability/logger';
import type { CreateResponseRequest, InputItem } from './request';
import type { ResponseObject } from './response-object';
import { putStoredResponse } from './response-store';
import { config } from '../config/env';

/** Writes one finished response to the store (see {@link responseSaver}). */
export type SaveResponse = (response: ResponseObject) => Promise<void>;

/** Options of {@link responseSaver}. */
export interface SaverOptions {
  /** How long it is kept (days; default RESPONSE_RETENTION_DAYS; 0 = not stored). */
  retentionDays?: number;
  /**
   * Epoch ms the request's answer must be out by (GatewayRequest.deadline: the function's timeout less
   * the reserve its settle needs). The write is waited for until then at most, so a slow responses
   * table can never push the request's settle past the end of its invocation. Undefined = no bound
   * but the SDK's own timeouts (store/dynamo.ts).
   */
  deadline?: number;
}

/**
 * How a request's finished response is stored, or undefined when it is not: `store: false`, or
 * storage turned off for the deployment (RESPONSE_RETENTION_DAYS=0). OpenAI's default is to store.
 *
 * The returned function is awaited before the client gets the response (buffered: before the body;
 * streamed: before `response.completed` / `.incomplete` / `.failed`), so a client that sends the next
 * turn at once always finds it. It never throws and never affects billing (the hold and its settle
 * are the chat core's): when DynamoDB refuses, or the write has not finished by `deadline`, the
 * answer — produced and billed — still goes out, a warning is logged (ids and the error's name only,
 * never content), and later references to it are answered as for an unstored response.
 * @param input what to store as the response's input (conversation-state.ts `stored`).
 */
export function responseSaver(
  accountId: string,
  body: Pick<CreateResponseRequest, 'store'>,
  input: readonly InputItem[],
  requestId: string,
  opts: SaverOptions = {},
): SaveResponse | undefined {
  const retentionDays = opts.retentionDays ?? config().RESPONSE_RETENTION_DAYS;
  if (body.store === false || retentionDays === 0) return undefined;
  return async (response) => {
    const left = opts.deadline === undefined ? Number.POSITIVE_INFINITY : opts.deadline - Date.now();
    if (left <= 0) {
      logger.warn('response not stored: the request has no time left before its deadline', { requestId, responseId: response.id });
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      if (Number.isFinite(left)) timer = setTimeout(() => resolve('late'), left);
    });
    const writing = putStoredResponse(accountId, response, input, retentionDays);
    writing.catch(() => undefined); // observed below, or abandoned when late
    try {
      const outcome = await Promise.race([writing, late]);
      if (outcome === 'late')
        logger.warn('response not stored in time: the answer goes out without waiting for it', { requestId, responseId: response.id, waitedMs: left });
      else if (outcome !== 'stored') logger.warn('response stored only in part: over the size bound', { requestId, responseId: response.id, outcome });
    } catch (err) {
      logger.warn('response not stored', { requestId, responseId: response.id, error: (err as { name?: string }).name ?? 'unknown' });
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  };
}
