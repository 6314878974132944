import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
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
 * - `POST /2018-06-01/runtime/invocation/{id}/error` and `POST /2018-06-01/runtime/init/error`;
 * - the Extensions API for external extensions (Lambda Developer Guide, "Lambda Extensions API"): every
 *   file in `<optDir>/extensions/` is started as a process before the runtime, `POST
 *   /2020-01-01/extension/register` (header `Lambda-Extension-Name` = its file name, body `{events}`)
 *   answers `Lambda-Extension-Identifier`, and `GET /2020-01-01/extension/event/next` parks until the
 *   SHUTDOWN event (INVOKE events are not emulated: registering for them is refused). INIT ends when
 *   the runtime and every extension have called their next.
 * One invocation at a time, as in one Lambda execution environment; more wait in a queue.
 *
 * Shutdown ({@link LambdaRuntime.stop}), as Lambda's: with an extension registered, SIGTERM to the runtime,
 * SIGKILL if it has not exited within {@link RUNTIME_SHUTDOWN_MS}, then the SHUTDOWN event to each
 * extension, and SIGKILL to whatever is left at {@link SHUTDOWN_LIMIT_MS}; with none, SIGKILL at once
 * (aws-samples/graceful-shutdown-with-aws-lambda: graceful shutdown only "for a function with registered
 * external extensions"; the runtime's reserve is up to 300 ms of the 2,000 ms).
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
  /** A layer's folder, as it would be unpacked in /opt: its `extensions/` files are started as external extensions. */
  optDir?: string;
}

/** What the runtime may use of Lambda's shutdown budget when external extensions are registered (ms). */
export const RUNTIME_SHUTDOWN_MS = 300;
/** Lambda's whole shutdown budget (ms): every process left is then killed. */
export const SHUTDOWN_LIMIT_MS = 2_000;

/** An external extension of this environment. */
interface Extension {
  file: string;
  process: ChildProcess;
  id?: string;
  events?: string[];
  parkedNext?: ServerResponse;
}

interface Pending {
  requestId: string;
  event: unknown;
  traceId: string | undefined;
  settle: (outcome: InvocationOutcome) => void;
  fail: (error: Error) => void;
}

const API = '/2018-06-01/runtime';
const EXTENSION_API = '/2020-01-01/extension';

/** One execution environment behind its own Runtime API. */
export class LambdaRuntime {
  /** Everything the function wrote to stdout / stderr (its logs, EMF lines included). */
  readonly output: string[] = [];
  private readonly queue: Pending[] = [];
  private readonly inFlight = new Map<string, Pending>();
  private parkedNext: ServerResponse | undefined;
  private process: ChildProcess | undefined;
  private initError: unknown;
  private readonly extensions: Extension[] = [];
  private runtimeReady = false;
  private ready: () => void = () => undefined;

  private idleWaiters: Array<() => void> = [];

  /**
   * Resolves once the runtime has finished every invocation and waits in `/next` — the moment Lambda
   * freezes a per-invocation environment (work the handler still awaits after its answer is done).
   */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.notifyIdle();
    });
  }

  private notifyIdle(): void {
    if (this.parkedNext === undefined || this.inFlight.size > 0 || this.queue.length > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** The external extensions that registered, by name, with the events they asked for. */
  get registeredExtensions(): Array<{ name: string; events: string[] }> {
    return this.extensions.filter((e) => e.id !== undefined).map((e) => ({ name: e.file, events: e.events ?? [] }));
  }

  private constructor(
    private readonly server: Server,
    private readonly options: LambdaRuntimeOptions,
  ) {}

  /** Starts the Runtime API and the runtime process; resolves once INIT is over (the first `/next`). */
  static async start(options: LambdaRuntimeOptions): Promise<LambdaRuntime> {
    let runtime: LambdaRuntime | undefined;
    const server = createServer((req, res) => {
      if (runtime === undefined) return void res.writeHead(503).end();
      runtime.route(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(err));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    runtime = new LambdaRuntime(server, options);
    const initDone = new Promise<void>((resolve) => {
      (runtime as LambdaRuntime).ready = resolve;
    });
    const port = (server.address() as AddressInfo).port;
    runtime.spawnExtensions(port);
    runtime.spawnProcess(port);
    const exited = once(runtime.process as ChildProcess, 'exit').then(([code]) => {
      throw new Error(`${options.functionName}: the runtime exited during INIT (code ${String(code)}): ${runtime?.output.join('').slice(-2000)}`);
    });
    exited.catch(() => undefined); // it also settles when stop() ends the process: not an error then
    // An extension that exits before its first next fails INIT, as in Lambda (Extension.Crash).
    const crashed = runtime.extensions.map((e) =>
      once(e.process, 'exit').then(([code]) => {
        if (e.parkedNext === undefined) throw new Error(`${options.functionName}: extension ${e.file} exited during INIT (code ${String(code)})`);
        return new Promise<never>(() => undefined);
      }),
    );
    await Promise.race([initDone, exited, ...crashed]);
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

  /** Shuts the environment down as Lambda does (see the file comment), then stops the Runtime API. */
  async stop(): Promise<void> {
    const child = this.process;
    const alive = (p: ChildProcess | undefined): p is ChildProcess => p !== undefined && p.exitCode === null && p.signalCode === null;
    const registered = this.extensions.filter((e) => e.id !== undefined);
    const limit = setTimeout(() => {
      for (const p of [child, ...this.extensions.map((e) => e.process)]) if (alive(p)) p.kill('SIGKILL');
    }, SHUTDOWN_LIMIT_MS);
    if (alive(child)) {
      const exited = once(child, 'exit');
      if (registered.length === 0) child.kill('SIGKILL');
      else {
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), RUNTIME_SHUTDOWN_MS);
        await exited;
        clearTimeout(kill);
      }
      await exited.catch(() => undefined);
    }
    const shutdown = JSON.stringify({ eventType: 'SHUTDOWN', shutdownReason: 'spindown', deadlineMs: Date.now() + SHUTDOWN_LIMIT_MS });
    for (const e of registered) {
      e.parkedNext?.writeHead(200, { 'content-type': 'application/json', 'lambda-extension-event-identifier': randomUUID() }).end(shutdown);
      e.parkedNext = undefined;
    }
    const left = this.extensions.map((e) => e.process).filter(alive);
    if (registered.length === 0) for (const p of left) p.kill('SIGKILL');
    await Promise.all(left.map((p) => once(p, 'exit')));
    clearTimeout(limit);
    this.parkedNext?.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Starts every file of `<optDir>/extensions/` as Lambda starts external extensions (before the runtime). */
  private spawnExtensions(port: number): void {
    const dir = this.options.optDir === undefined ? undefined : join(this.options.optDir, 'extensions');
    for (const file of dir === undefined ? [] : readdirSync(dir).sort()) {
      const child = spawn(join(dir as string, file), [], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${port}`, ...this.lambdaEnv() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => this.output.push(chunk.toString('utf8')));
      this.extensions.push({ file, process: child });
    }
  }

  /** INIT is over once the runtime and every extension have asked for their next event. */
  private checkReady(): void {
    if (this.runtimeReady && this.extensions.every((e) => e.parkedNext !== undefined)) this.ready();
  }

  private spawnProcess(port: number): void {
    this.process = spawn(runtimePaths.node, [runtimePaths.ric], {
      cwd: this.options.taskRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${port}`, ...this.lambdaEnv() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.process.stdout, this.process.stderr]) stream?.on('data', (chunk: Buffer) => this.output.push(chunk.toString('utf8')));
  }

  /**
   * What the managed runtime's environment has (Lambda Developer Guide, "Defined runtime environment
   * variables"), and the function's own; extensions see the same ("environment variables are shared
   * between the function and the extensions").
   */
  private lambdaEnv(): Record<string, string> {
    const { functionName, taskRoot, handler = 'index.handler', env, memoryMb = 1024 } = this.options;
    return {
      LANG: 'en_US.UTF-8',
      TZ: ':UTC',
      LAMBDA_TASK_ROOT: taskRoot,
      _HANDLER: handler,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      AWS_LAMBDA_FUNCTION_NAME: functionName,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
      AWS_LAMBDA_LOG_STREAM_NAME: `2026/01/01/[$LATEST]${randomUUID().replace(/-/g, '')}`,
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      ...env,
    };
  }

  /** The Extensions API: register, then a next that parks until the SHUTDOWN event. */
  private async extensionRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '';
    if (req.method === 'POST' && url === `${EXTENSION_API}/register`) {
      const name = String(req.headers['lambda-extension-name'] ?? '');
      const ext = this.extensions.find((e) => e.file === name && e.id === undefined);
      const { events } = JSON.parse((await readAll(req)).toString('utf8') || '{}') as { events?: string[] };
      if (ext === undefined || !Array.isArray(events) || events.some((e) => e !== 'SHUTDOWN'))
        return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ errorType: 'Extension.InvalidRequest' }));
      ext.id = randomUUID();
      ext.events = events;
      const { functionName, handler = 'index.handler' } = this.options;
      res.writeHead(200, { 'content-type': 'application/json', 'lambda-extension-identifier': ext.id });
      return void res.end(JSON.stringify({ functionName, functionVersion: '$LATEST', handler }));
    }
    const ext = this.extensions.find((e) => e.id !== undefined && e.id === req.headers['lambda-extension-identifier']);
    if (req.method !== 'GET' || url !== `${EXTENSION_API}/event/next` || ext === undefined) return void res.writeHead(403).end();
    ext.parkedNext = res;
    this.checkReady();
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '';
    if (url.startsWith(EXTENSION_API)) return this.extensionRoute(req, res);
    if (req.method === 'GET' && url === `${API}/invocation/next`) {
      this.runtimeReady = true;
      this.checkReady();
      this.parkedNext = res;
      this.serveNext();
      this.notifyIdle();
      return;
    }
    if (req.method === 'POST' && url === `${API}/init/error`) {
      this.initError = JSON.parse((await readAll(req)).toString('utf8') || 'null');
      res.writeHead(202).end();
      this.ready();
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
