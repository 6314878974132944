/**
 * The `keep-alive` fault. Under load DeepSeek holds the connection open before inference starts
 * (providers.md §4.5): a non-stream response is preceded by empty lines (a JSON parser must trim
 * them), a stream receives `: keep-alive` SSE comment lines; if inference has not started after
 * 10 minutes the server closes the connection. The fault is that wait with no end: headers at once,
 * then one beat every `everyMs`, never an answer, until the client gives up.
 */
import type { ServerResponse } from 'node:http';
import { sleep } from './abortable-wait.js';
import { SSE_HEADERS, write, type ExchangeControl } from './deliver.js';

/** What a stream receives per beat: an SSE comment, which parsers ignore (WHATWG HTML, server-sent events). */
const SSE_BEAT = ': keep-alive\n\n';
/** What a buffered response receives per beat: an empty line, legal whitespace before a JSON text. */
const JSON_BEAT = '\n';

/** Send 200 headers, then a beat every `everyMs` (at least 1 ms) until the exchange is aborted. */
export async function keepAliveForever(res: ServerResponse, stream: boolean, everyMs: number, ctl: ExchangeControl): Promise<void> {
  res.writeHead(200, stream ? SSE_HEADERS : { 'content-type': 'application/json' });
  res.flushHeaders();
  const beat = stream ? SSE_BEAT : JSON_BEAT;
  while (!ctl.signal.aborted) {
    await write(res, beat, ctl.signal);
    await sleep(Math.max(1, everyMs), ctl.signal);
  }
}
