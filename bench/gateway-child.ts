/**
 * Child process of `npm run bench`: the DEPLOYED bundles (chat and embeddings `index.mjs` of cdk.out)
 * behind the local Function URL stand-in, with their template env, memory and timeout (`BENCH_GATEWAY` =
 * {@link GatewaySetup}); its CPU is the gateway's. Two replay routes answer with bytes the parent recorded
 * from a real modelmux answer, without the gateway's work: their CPU is the stand-in's own. It counts AWS
 * calls (bench/aws-calls.ts) and the bytes the handlers log, and answers `idle` (once no invocation
 * runs), `take` (counts since the last take), `replay` and `exit`.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createFunctionUrlServer, installAwslambdaGlobals, listen } from '../local/function-url';
import { countAwsCalls } from './aws-calls';

/** What the parent tells the child: each function's asset folder, memory and timeout. */
export type GatewaySetup = Record<'chat' | 'embeddings', { dir: string; memoryMb: number; timeoutSeconds: number }>;

/** A recorded answer to replay: headers, the body's frames (base64 of the wire bytes of a gzip answer), the pause between frames (ms). */
export interface Replay {
  headers: Record<string, string>;
  frames: string[];
  base64?: boolean;
  gapMs: number;
}

const setup = JSON.parse(process.env.BENCH_GATEWAY ?? '') as GatewaySetup;
const send = (message: object): void => void process.send?.(message);

// What the handlers log, as CloudWatch would ingest it: bytes and lines (one log event each).
let logBytes = 0;
let logLines = 0;
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    logBytes += Buffer.byteLength(text);
    logLines += text.split('\n').length - 1;
    return write(chunk, ...rest);
  }) as typeof stream.write;
}

const calls = countAwsCalls();
installAwslambdaGlobals();
const load = async (dir: string): Promise<unknown> => ((await import(pathToFileURL(join(dir, 'index.mjs')).href)) as { handler: unknown }).handler;
const chat = await load(setup.chat.dir);
const embeddings = await load(setup.embeddings.dir);

const replays = new Map<string, Replay>();
const replayOf = (event: APIGatewayProxyEventV2): Replay => {
  const replay = replays.get(event.rawPath.split('/').pop() ?? '');
  if (replay === undefined) throw new Error(`no replay for ${event.rawPath}`);
  return replay;
};
const replayStream = awslambda.streamifyResponse(async (event: APIGatewayProxyEventV2, stream) => {
  const replay = replayOf(event);
  const out = awslambda.HttpResponseStream.from(stream, { statusCode: 200, headers: replay.headers });
  for (const [i, frame] of replay.frames.entries()) {
    if (i > 0 && replay.gapMs > 0) await new Promise((r) => setTimeout(r, replay.gapMs));
    out.write(replay.base64 === true ? Buffer.from(frame, 'base64') : frame);
  }
  out.end();
});
const replayBuffered = async (event: APIGatewayProxyEventV2) => {
  const { headers, frames, base64 } = replayOf(event);
  return {
    statusCode: 200,
    headers,
    body: base64 === true ? Buffer.concat(frames.map((f) => Buffer.from(f, 'base64'))).toString('base64') : frames.join(''),
    isBase64Encoded: base64 === true,
  };
};

// Invocations running (a streamed chat settles after its response has ended): `idle` waits for none.
let inflight = 0;
const idleWaiters: Array<() => void> = [];
const invocationEnded = (): void => {
  if (--inflight === 0) for (const wake of idleWaiters.splice(0)) wake();
};

const server = createFunctionUrlServer(
  [
    { match: (p) => p.startsWith('/bench/replay-buffered/'), handler: replayBuffered, invokeMode: 'BUFFERED', functionName: 'replay-buffered' },
    { match: (p) => p.startsWith('/bench/replay/'), handler: replayStream, invokeMode: 'RESPONSE_STREAM', functionName: 'replay-stream' },
    {
      match: (p) => p.startsWith('/v1/embeddings'),
      handler: embeddings,
      invokeMode: 'BUFFERED',
      functionName: 'modelmux-embeddings',
      memoryMb: setup.embeddings.memoryMb,
      timeoutMs: setup.embeddings.timeoutSeconds * 1000,
    },
    {
      match: () => true,
      handler: chat,
      invokeMode: 'RESPONSE_STREAM',
      functionName: 'modelmux-chat',
      memoryMb: setup.chat.memoryMb,
      timeoutMs: setup.chat.timeoutSeconds * 1000,
    },
  ],
  { onInvocation: invocationEnded },
);
server.on('request', () => void inflight++);
const { url } = await listen(server, 0, '127.0.0.1');

process.on('message', async (raw: { id: number; command: string; arg?: unknown }) => {
  let result: unknown = true;
  if (raw.command === 'idle' && inflight > 0) await new Promise<void>((wake) => idleWaiters.push(wake));
  if (raw.command === 'take') [result, logBytes, logLines] = [{ calls: calls.take(), logBytes, logLines }, 0, 0];
  if (raw.command === 'replay') replays.set((raw.arg as { kind: string }).kind, (raw.arg as { replay: Replay }).replay);
  if (raw.command === 'exit') setImmediate(() => process.exit(0)); // process.exit, not a signal: `--cpu-prof` writes its profile
  send({ type: 'reply', id: raw.id, result });
});
process.once('disconnect', () => process.exit(0));
send({ type: 'ready', origin: url.replace(/\/$/, '') });
