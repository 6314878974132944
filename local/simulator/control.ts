/**
 * The HTTP control API for out-of-process users (e.g. `npm start` with a test runner elsewhere):
 * - `POST /__sim/faults` `{match?, fault, times?}` — add a fault (204);
 * - `DELETE /__sim/faults` — clear faults (204);
 * - `GET /__sim/requests` — the request log, JSON array;
 * - `POST /__sim/reset` — clear log and faults (204);
 * - `POST /__sim/chunk-delay` `{ms}` — set the gap between streamed events (204);
 * - `POST /__sim/accepted-keys` `{keys: string[] | null}` — strict keys: only these are accepted (null: any) (204).
 */
import type { ServerResponse } from 'node:http';
import { parseFault, parseFaultMatch } from './faults.js';
import { asNumber, isObject } from './json-narrowing.js';
import type { Simulator } from './types.js';

/** Path prefix of the control API. */
export const CONTROL_PREFIX = '/__sim/';

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function noContent(res: ServerResponse): void {
  res.writeHead(204);
  res.end();
}

/** Serve one control request. `body` is the parsed JSON body (undefined if empty or invalid). */
export function handleControl(sim: Simulator, method: string, pathname: string, body: unknown, res: ServerResponse): void {
  const route = `${method} ${pathname.replace(/\/+$/, '')}`;
  switch (route) {
    case 'POST /__sim/faults': {
      const match = parseFaultMatch(isObject(body) ? body['match'] : undefined);
      const fault = parseFault(isObject(body) ? body['fault'] : undefined);
      const times = isObject(body) && body['times'] !== undefined ? asNumber(body['times']) : Infinity;
      if (!match || !fault || times === undefined) {
        json(res, 400, { error: { message: 'expected {match?: {provider?, model?}, fault: Fault, times?: number}' } });
        return;
      }
      sim.setFault(match, fault, { times });
      noContent(res);
      return;
    }
    case 'DELETE /__sim/faults':
      sim.clearFaults();
      noContent(res);
      return;
    case 'GET /__sim/requests':
      json(res, 200, sim.requests);
      return;
    case 'POST /__sim/reset':
      sim.reset();
      noContent(res);
      return;
    case 'POST /__sim/chunk-delay': {
      const ms = isObject(body) ? asNumber(body['ms']) : undefined;
      if (ms === undefined || ms < 0) {
        json(res, 400, { error: { message: 'expected {ms: number >= 0}' } });
        return;
      }
      sim.setChunkDelay(ms);
      noContent(res);
      return;
    }
    case 'POST /__sim/accepted-keys': {
      const keys = isObject(body) ? body['keys'] : undefined;
      if (!(keys === null || (Array.isArray(keys) && keys.every((k) => typeof k === 'string')))) {
        json(res, 400, { error: { message: 'expected {keys: string[] | null}' } });
        return;
      }
      sim.setAcceptedKeys(keys === null ? undefined : (keys as string[]));
      noContent(res);
      return;
    }
    default:
      json(res, 404, { error: { message: `no control endpoint ${route}` } });
  }
}
