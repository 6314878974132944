/**
 * The HTTP control API, for a simulator in another process (the bench runs it as a child process):
 * - `POST /__sim/reset` — clear the request log and faults (204);
 * - `POST /__sim/chunk-delay` `{ms}` — set the gap between streamed events (204).
 * Faults are set in process (`Simulator.setFault`), where the tests run.
 */
import type { ServerResponse } from 'node:http';
import { asNumber, isObject } from './json-narrowing.js';
import type { Simulator } from './types.js';

/** Path prefix of the control API. */
export const CONTROL_PREFIX = '/__sim/';

function answer(res: ServerResponse, status: number, message?: string): void {
  if (message === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const text = JSON.stringify({ error: { message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** Serve one control request. `body` is the parsed JSON body (undefined if empty or invalid). */
export function handleControl(sim: Simulator, method: string, pathname: string, body: unknown, res: ServerResponse): void {
  const route = `${method} ${pathname.replace(/\/+$/, '')}`;
  switch (route) {
    case 'POST /__sim/reset':
      sim.reset();
      answer(res, 204);
      return;
    case 'POST /__sim/chunk-delay': {
      const ms = isObject(body) ? asNumber(body['ms']) : undefined;
      if (ms === undefined || ms < 0) {
        answer(res, 400, 'expected {ms: number >= 0}');
        return;
      }
      sim.setChunkDelay(ms);
      answer(res, 204);
      return;
    }
    default:
      answer(res, 404, `no control endpoint ${route}`);
  }
}
