import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP upstream whose every answer a test scripts, for the wire behaviours the upstream
 * simulator (local/simulator) cannot produce: a malformed FIRST event, keep-alive bytes forever, a
 * provider's context-length error. It is a real server on a real socket (the router's node:http
 * client, timers and aborts run for real); only the upstream's side is hand-written.
 */

/** One request as the scripted upstream saw it. */
export interface ScriptedRequest {
  path: string;
  body: string;
  /** Epoch ms. */
  receivedAt: number;
  /** The client closed the connection before the script ended the response. */
  aborted: boolean;
}

export type Script = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export interface ScriptedUpstream {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  requests: ScriptedRequest[];
  /** Replaces the script for the following requests. */
  setScript(script: Script): void;
  close(): Promise<void>;
}

export async function startScriptedUpstream(script: Script): Promise<ScriptedUpstream> {
  let current = script;
  const requests: ScriptedRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const seen: ScriptedRequest = { path: req.url ?? '', body, receivedAt: Date.now(), aborted: false };
      requests.push(seen);
      res.on('close', () => {
        if (!res.writableFinished) seen.aborted = true;
      });
      current(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setScript: (s) => (current = s),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** DeepSeek's way of holding a busy connection (providers.md §4.5): headers, then a blank line every `everyMs`, never a body. */
export function keepAliveForever(everyMs: number): Script {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('\n');
    const t = setInterval(() => res.write('\n'), everyMs);
    res.on('close', () => clearInterval(t));
  };
}

/** An OpenAI-style error answer. */
export function openAIError(status: number, error: { message: string; type: string; param: string | null; code: string | null }): Script {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error }));
  };
}

/** An OpenAI chat stream of raw SSE frames written in order, then the end. */
export function openAISse(frames: readonly string[]): Script {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const f of frames) res.write(f);
    res.end();
  };
}
