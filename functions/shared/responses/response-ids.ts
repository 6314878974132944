/**
 * The ids of the Responses API, all derived from our request id (http/request-id.ts,
 * `req_<13-digit ms>_<16 hex>`), so logs, ledger, answer and store agree, and so every item id names
 * the response it belongs to: resolving an `item_reference` is one read of that response, no index.
 *
 * | id | form | example |
 * |---|---|---|
 * | response | `resp_<requestId>` | `resp_req_1735689600000_9f86d081884c7d65` |
 * | output item | `<msg\|rs\|fc>_<requestId>_<output index>` | `msg_req_1735689600000_9f86d081884c7d65_1` |
 * | input item without its own id (input_items listing only) | `<prefix>_<requestId>_in<input index>` | `msg_req_…_in0` |
 *
 * OpenAI's ids have the same prefixes (`resp_`, `msg_`, `rs_`, `fc_`); clients treat them as opaque.
 */

/** The prefix of each output item type's id (OpenAI's). */
export const ITEM_ID_PREFIX = { message: 'msg', reasoning: 'rs', function_call: 'fc', function_call_output: 'fco' } as const;

/** What may sit between the prefix and the index: our request ids, and anything of the same alphabet (tests). */
const REQUEST_ID_PART = '[A-Za-z0-9_]{1,80}';
const RESPONSE_ID = new RegExp(`^resp_(${REQUEST_ID_PART})$`);
const OUTPUT_ITEM_ID = new RegExp(`^(?:msg|rs|fc)_(${REQUEST_ID_PART})_(\\d{1,6})$`);

/** The response id of a request. */
export function responseIdOf(requestId: string): string {
  return `resp_${requestId}`;
}

/** The id of the output item at `outputIndex` (its position in `response.output`). */
export function outputItemId(type: 'message' | 'reasoning' | 'function_call', requestId: string, outputIndex: number): string {
  return `${ITEM_ID_PREFIX[type]}_${requestId}_${outputIndex}`;
}

/** The id an input item without its own is listed under (`GET /v1/responses/{id}/input_items`). */
export function inputItemId(type: keyof typeof ITEM_ID_PREFIX, requestId: string, inputIndex: number): string {
  return `${ITEM_ID_PREFIX[type]}_${requestId}_in${inputIndex}`;
}

/** True when `id` has the form of a response id modelmux makes (a cheap check before any read). */
export function isResponseId(id: string): boolean {
  return RESPONSE_ID.test(id);
}

/** The request id inside a response id, or undefined when `id` is not one of ours. */
export function requestIdOfResponse(id: string): string | undefined {
  return RESPONSE_ID.exec(id)?.[1];
}

/**
 * The response an output item id belongs to (`msg_<requestId>_<n>` → `resp_<requestId>`), or undefined
 * for an id modelmux never made (another provider's, an input item's, a typo): such an item cannot
 * have been stored here.
 */
export function responseIdOfItem(itemId: string): string | undefined {
  const m = OUTPUT_ITEM_ID.exec(itemId);
  return m?.[1] === undefined ? undefined : responseIdOf(m[1]);
}
