/**
 * One incoming provider request, as the per-provider handlers see it: already routed, body read and
 * parsed, with the simulator-wide settings it needs to plan a reply.
 */
import type { Route } from './routes.js';
import type { SimProvider } from './types.js';

export interface SimCall {
  provider: SimProvider;
  route: Route;
  method: string;
  url: URL;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON body; undefined when empty or not JSON (see `bodyInvalid`). */
  body: unknown;
  /** The body was present but not valid JSON. */
  bodyInvalid: boolean;
  /** 1-based arrival number; seeds ids so they are stable within a run. */
  seq: number;
  /** e.g. `req_sim_000001`; echoed in request-id headers and Anthropic bodies. */
  requestId: string;
  /** Target length of a plain reply, words. */
  replyWords: number;
  /** Response `created` timestamp, seconds. */
  created: number;
}
