import { toErrorBody } from '../errors/gateway-errors';

/**
 * Our SSE framing, exactly OpenAI's (providers.md §1.4): `data: <json>\n\n` per chunk, no `event:`
 * field, `data: [DONE]\n\n` at the end.
 */

/** One chunk as a wire frame. */
export function dataFrame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** The end-of-stream marker the OpenAI SDKs stop at. */
export const DONE_FRAME = 'data: [DONE]\n\n';

/**
 * A failure after the first byte: the OpenAI SDK throws on a data payload with a top-level `error`
 * key (openai-node `Stream`, providers.md §1.4), so the client sees an error, never a silent cut.
 * No `[DONE]` follows it.
 */
export function errorFrame(err: unknown): string {
  return dataFrame(toErrorBody(err));
}
