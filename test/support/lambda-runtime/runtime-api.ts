import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { runtimePaths } from './versions';

/**
 * A loopback Lambda Runtime API for one execution environment, and that environment: Node 24 running
 * Amazon's runtime interface client (`aws-lambda-ric`) on a deployed bundle, as the nodejs24.x managed
 * runtime does. Endpoints (Lambda Developer Guide, "Using the Lambda runtime API for custom runtimes";
 * "Response streaming" for the streaming protocol):
 * - `GET  /2018-06-01/runtime/invocation/next` → the next event (long-polled), with the headers
 *   `Lambda-Runtime-Aws-Request-Id`, `-Deadline-Ms`, `-Invoked-Function-Arn`, `-Trace-Id`;
 * - `POST /2018-06-01/runtime/invocation/{id}/response` → the result: the whole JSON payload, or, with
 *   `Lambda-Runtime-Function-Response-Mode: streaming`, a chunked body (for a Function URL, the HTTP
 *   integration prelude, 8 NUL bytes, then the body) ending with the trailers
 *   `Lambda-Runtime-Function-Error-Type` / `-Error-Body` (base64) when the handler failed mid-stream;
 * - `POST /2018-06-01/runtime/invocation/{id}/error` and `POST /2018-06-01/runtime/init/error`.
 * One invocation at a time, as in one Lambda execution environment; more wait in a queue.
 */

/** What the runtime answered for one invocation. */
export type InvocationOutcome =
  | { kind: 'buffered'; payload: Buffer }
  /** `body` yields the bytes as the runtime sends them; `trailers` resolves when it has ended. */
  | { kind: 'stream'; contentType: string; body: Readable; trailers: Promise<Record<string, string | undefined>> }
  | { kind: 'error'; errorType: string; payload: unknown };

/** Options of {@link LambdaRuntime.start}. */
export interface LambdaRuntimeOptions {
  functionName: string;
  /** The bundle folder (LAMBDA_TASK_ROOT), e.g. the asset of a synthesised function. */
  taskRoot: string;
  /** `_HANDLER`; default `index.handler`. */
  handler?: string;
  /** The function's environment (on top of what Lambda itself sets). */
  env: Record<string, string>;
  /** Invocation timeout (sets the deadline the handler sees), ms. */
  timeoutMs: number;
  memoryMb?: number;
}

interface Pending {
  requestId: string;
  event: unknown;
  traceId: string | undefined;
  settle: (outcome: InvocationOutcome) => void;
  fail: (error: Error) => void;
}

const API = '/2018-06-01/runtime';

/** One execution environment behind its own Runtime API. */
export class LambdaRuntime {
  /** Everything the function wrote to stdout / stderr (its logs, EMF lines included). */
  readonly output: string[] = [];
  private readonly queue: Pending[] = [];
  private readonly inFlight = new Map<string, Pending>();
  private parkedNext: ServerResponse | undefined;
  private process: ChildProcess | undefined;
  private initError: unknown;

  private constructor(
    private readonly server: Server,
    private readonly options: LambdaRuntimeOptions,
  ) {}

  /** Starts the Runtime API and the runtime process; resolves once INIT is over (the first `/next`). */
  static async start(options: LambdaRuntimeOptions): Promise<LambdaRuntime> {
    let runtime: LambdaRuntime | undefined;
    let ready: () => void = () => undefined;
    const initDone = new Promise<void>((resolve) => {
      ready = resolve;
    });
    const server = createServer((req, res) => {
      if (runtime === undefined) return void res.writeHead(503).end();
      runtime.route(req, res, ready).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(err));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    runtime = new LambdaRuntime(server, options);
    runtime.spawnProcess((server.address() as AddressInfo).port);
    const exited = once(runtime.process as ChildProcess, 'exit').then(([code]) => {
      throw new Error(`${options.functionName}: the runtime exited during INIT (code ${String(code)}): ${runtime?.output.join('').slice(-2000)}`);
    });
    exited.catch(() => undefined); // it also settles when stop() ends the process: not an error then
    await Promise.race([initDone, exited]);
    if (runtime.initError !== undefined) throw new Error(`${options.functionName}: INIT failed: ${JSON.stringify(runtime.initError)}`);
    return runtime;
  }

  /**
   * Invokes the function with `event`. Resolves when the runtime answers: at once for a stream (read
   * `body` as it comes), at the end for a buffered payload or an error.
   * @param traceId the `Lambda-Runtime-Trace-Id` header (X-Ray), e.g. `Root=1-…;Parent=…;Sampled=1`.
   */
  invoke(event: unknown, traceId?: string): Promise<InvocationOutcome> {
    return new Promise((settle, fail) => {
      this.queue.push({ requestId: randomUUID(), event, traceId, settle, fail });
      this.serveNext();
    });
  }

  /** Stops the process and the Runtime API. */
  async stop(): Promise<void> {
    const child = this.process;
    if (child && child.exitCode === null && child.signalCode === null) {
      // As Lambda shuts an environment down: SIGTERM, then SIGKILL once the shutdown budget (≤ 500 ms) is
      // spent. A runtime parked in the client's /next call cannot run a SIGTERM handler (billing/lease.ts
      // installs one once it takes a lease), so the SIGKILL is what ends it, as in Lambda.
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 2_000);
      await exited;
      clearTimeout(kill);
    }
    this.parkedNext?.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private spawnProcess(port: number): void {
    const { functionName, taskRoot, handler = 'index.handler', env, memoryMb = 1024 } = this.options;
    // What the managed runtime's environment has (Lambda Developer Guide, "Defined runtime environment variables").
    this.process = spawn(runtimePaths.node, [runtimePaths.ric], {
      cwd: taskRoot,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        LANG: 'en_US.UTF-8',
        TZ: ':UTC',
        LAMBDA_TASK_ROOT: taskRoot,
        _HANDLER: handler,
        AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${port}`,
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
        AWS_LAMBDA_FUNCTION_NAME: functionName,
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
        AWS_LAMBDA_LOG_STREAM_NAME: `2026/01/01/[$LATEST]${randomUUID().replace(/-/g, '')}`,
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.process.stdout, this.process.stderr]) stream?.on('data', (chunk: Buffer) => this.output.push(chunk.toString('utf8')));
  }

  private async route(req: IncomingMessage, res: ServerResponse, ready: () => void): Promise<void> {
    const url = req.url ?? '';
    if (req.method === 'GET' && url === `${API}/invocation/next`) {
      ready();
      this.parkedNext = res;
      this.serveNext();
      return;
    }
    if (req.method === 'POST' && url === `${API}/init/error`) {
      this.initError = JSON.parse((await readAll(req)).toString('utf8') || 'null');
      res.writeHead(202).end();
      ready();
      return;
    }
    const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
    const pending = match ? this.inFlight.get(decodeURIComponent(match[1] ?? '')) : undefined;
    if (req.method !== 'POST' || match === null || pending === undefined) return void res.writeHead(404).end();
    this.inFlight.delete(pending.requestId);
    if (match[2] === 'error') {
      const payload: unknown = JSON.parse((await readAll(req)).toString('utf8') || 'null');
      res.writeHead(202).end();
      pending.settle({ kind: 'error', errorType: String(req.headers['lambda-runtime-function-error-type'] ?? ''), payload });
    } else if (req.headers['lambda-runtime-function-response-mode'] === 'streaming') {
      const trailers = new Promise<Record<string, string | undefined>>((resolve) => {
        req.once('end', () => {
          res.writeHead(202).end();
          resolve({ ...req.trailers });
        });
        req.once('close', () => resolve({ ...req.trailers }));
      });
      pending.settle({ kind: 'stream', contentType: String(req.headers['content-type'] ?? ''), body: req, trailers });
    } else {
      const payload = await readAll(req);
      res.writeHead(202).end();
      pending.settle({ kind: 'buffered', payload });
    }
  }

  /** Hands the next queued event to a waiting `/next`, one invocation at a time. */
  private serveNext(): void {
    const res = this.parkedNext;
    if (res === undefined || this.inFlight.size > 0) return;
    const next = this.queue.shift();
    if (next === undefined) return;
    this.parkedNext = undefined;
    this.inFlight.set(next.requestId, next);
    res.writeHead(200, {
      'content-type': 'application/json',
      'lambda-runtime-aws-request-id': next.requestId,
      'lambda-runtime-deadline-ms': String(Date.now() + this.options.timeoutMs),
      'lambda-runtime-invoked-function-arn': `arn:aws:lambda:us-east-1:123456789012:function:${this.options.functionName}`,
      ...(next.traceId ? { 'lambda-runtime-trace-id': next.traceId } : {}),
    });
    res.end(JSON.stringify(next.event));
  }
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
