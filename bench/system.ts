/**
 * Everything the bench runs against, each in its own process so each one's CPU can be read apart
 * (pidusage): DynamoDB Local (a JVM), the upstream simulator, the gateway (the deployed bundles behind
 * the Function URL stand-in, on the Node 24 Lambda runs) and Portkey's open-source gateway beside it.
 * The bench process itself is the client. All on this machine.
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pidusage from 'pidusage';
import { SIMULATED_BASE } from '../local/gateway';
import { ensureTables, startDynamoDbLocal } from '../local/dynamodb-local';
import { runtimePaths, runtimeProblem } from '../test/support/lambda-runtime/versions';
import type { AwsCalls } from './aws-calls';
import type { GatewaySetup, Replay } from './gateway-child';
import type { StackFunction } from './stack';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((c) => c.kill('SIGKILL')));

/** The Node 24 binary of `npm run lambda-runtime` (Lambda's nodejs24.x). @throws Error naming the fix when it is missing. */
export function lambdaNode(): string {
  const problem = runtimeProblem();
  if (problem !== undefined && !existsSync(runtimePaths.node)) throw new Error(`the bench runs the gateway on Lambda's Node 24: ${problem}`);
  return runtimePaths.node;
}

/**
 * Forks a TypeScript entry of bench/ under tsx on `execPath`, output to `logFile`; waits for its `ready`
 * message (60 s). It speaks the bench's IPC: `{id, command, arg}` → `{type: 'reply', id, result}`.
 */
async function startChild(file: string, env: NodeJS.ProcessEnv, logFile: string, nodeFlags: string[] = [], execPath = process.execPath) {
  const log = openSync(logFile, 'a');
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
    env,
    execPath,
    execArgv: ['--import', 'tsx', ...nodeFlags],
    stdio: ['ignore', log, log, 'ipc'],
  });
  closeSync(log);
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  const waiting = new Map<number, (result: unknown) => void>();
  let nextId = 1;
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file}: not ready after 60 s (see ${logFile})`)), 60_000);
    void exited.then(() => reject(new Error(`${file} exited before it was ready (see ${logFile})`)));
    child.on('message', (m: { type?: string; id?: number; result?: unknown }) => {
      if (m.type === 'ready') resolve((clearTimeout(timer), m as Record<string, unknown>));
      else if (m.type === 'reply' && m.id !== undefined) waiting.get(m.id)?.(m.result);
    });
  });
  const call = (command: string, arg?: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.send({ id, command, arg });
      void exited.then(() => reject(new Error(`${file} exited during ${command} (see ${logFile})`)));
    });
  return { process: child, ready, call, exited };
}

/**
 * A running gateway child at `origin`: `idle` resolves once no invocation runs (a stream settles after its
 * answer ends); `take` returns the AWS calls and log output since the last take; `replay` makes
 * `/bench/replay[-buffered]/<kind>` answer a recording; `exit` ends it cleanly (a `--cpu-prof` is written).
 */
export interface Gateway {
  pid: number;
  origin: string;
  idle(): Promise<void>;
  take(): Promise<{ calls: AwsCalls; logBytes: number; logLines: number }>;
  replay(kind: string, replay: Replay): Promise<void>;
  exit(): Promise<void>;
}

/** Another gateway measured beside modelmux (Portkey), or why it could not run. */
export type Peer = { origin: string; pid: number; version: string } | { error: string };

/**
 * The processes under test. `pace` sets the simulator's gap between stream events (and clears its log);
 * `account` makes an account with $1,000 of credit and `keys` API keys (with `email`: a dashboard account);
 * `startGateway` runs the deployed bundles on Node 24 with `env` over the template's (e.g. the lease mode).
 */
/** What a bench account starts with: free tokens, nano-USD of credit, and optionally a spend limit on each key (nano-USD). */
export interface AccountFunds {
  freeTokens: number;
  creditNanoUsd: number;
  keyLimitNanoUsd?: number;
}

export interface System {
  dynamodb: { endpoint: string; pid: number };
  simulator: { pid: number; openaiBaseUrl: string };
  pace(gapMs: number): Promise<void>;
  /** A new account with `keys` API keys (default funds: $1,000 of credit, no free tokens; `funds.keyLimitNanoUsd`: each key's spend limit). */
  account(keys: number, email?: string, funds?: AccountFunds): Promise<string[]>;
  startGateway(env: Record<string, string>, nodeFlags?: string[]): Promise<Gateway>;
  startPortkey(): Promise<Peer>;
  stop(): Promise<void>;
}

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Portkey's gateway 1.x (npm `@portkey-ai/gateway`), kept in .cache/portkey (25 MB with its dependencies: too big for a devDependency). */
export const PORTKEY_VERSION = '1.15.2';

/** Starts Portkey on Node 24 (installing it first when .cache/portkey lacks it); requests name the simulator per request (`x-portkey-custom-host`). */
async function startPortkey(logDir: string, stops: Array<() => Promise<void>>): Promise<Peer> {
  const dir = join(ROOT, '.cache', 'portkey');
  const main = join(dir, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!existsSync(main)) {
    const npm = spawnSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel=error', `@portkey-ai/gateway@${PORTKEY_VERSION}`], {
      stdio: 'ignore',
      timeout: 180_000,
    });
    if (npm.status !== 0 || !existsSync(main)) return { error: `npm could not install @portkey-ai/gateway@${PORTKEY_VERSION} into .cache/portkey (offline?)` };
  }
  const port = await freePort();
  const log = openSync(join(logDir, 'portkey.log'), 'w');
  const child = spawn(lambdaNode(), [main, `--port=${port}`, '--headless'], { stdio: ['ignore', log, log] });
  closeSync(log);
  running.add(child);
  stops.push(async () => void (child.kill('SIGTERM'), await new Promise((r) => child.once('exit', r))));
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(origin).then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const version = (JSON.parse(readFileSync(join(dir, 'node_modules', '@portkey-ai', 'gateway', 'package.json'), 'utf8')) as { version: string }).version;
  return { origin, pid: child.pid ?? 0, version };
}

/**
 * Starts DynamoDB Local (in memory), the simulator and fresh tables. Logs go to `logDir` (emptied first).
 * Whatever started is stopped again when a later step fails.
 */
export async function startSystem(chat: StackFunction, embeddings: StackFunction, logDir: string, replyWords: number): Promise<System> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
  };
  for (const log of ['simulator.log', 'gateway.log']) writeFileSync(join(logDir, log), '');
  try {
    const node24 = lambdaNode();
    const ddb = await startDynamoDbLocal({ startTimeoutMs: 120_000 }); // a busy machine starts the JVM slowly
    stops.push(ddb.stop);
    const sim = await startChild('simulator-child.ts', { ...process.env, BENCH_REPLY_WORDS: String(replyWords) }, join(logDir, 'simulator.log'));
    stops.push(async () => void (sim.process.kill('SIGTERM'), await sim.exited));
    const simInfo = sim.ready as unknown as { baseUrl: string; urls: Record<string, string> };
    const prefix = `bench-${randomBytes(3).toString('hex')}`;
    const tables = {
      KEYS_TABLE: `${prefix}-keys`,
      ACCOUNTS_TABLE: `${prefix}-accounts`,
      LEDGER_TABLE: `${prefix}-ledger`,
      RESPONSES_TABLE: `${prefix}-responses`,
    };
    // Rate limits off: the bench measures throughput on one account (free-tier limits would refuse it).
    const noRateLimits = { RATE_LIMIT_RPM: '0', RATE_LIMIT_CONCURRENT: '0', RATE_LIMIT_FREE_RPM: '0', RATE_LIMIT_FREE_CONCURRENT: '0' };
    Object.assign(process.env, { DYNAMODB_ENDPOINT: ddb.endpoint, ...tables, ...noRateLimits });
    const { documentClient } = await import('../functions/shared/store/dynamo');
    await ensureTables(documentClient(), {
      keys: tables.KEYS_TABLE,
      accounts: tables.ACCOUNTS_TABLE,
      ledger: tables.LEDGER_TABLE,
      responses: tables.RESPONSES_TABLE,
    });
    const { createAccount } = await import('../functions/shared/accounts/account-store');
    const { createKey } = await import('../functions/shared/accounts/keys/api-key-store');

    // The gateway's env: the functions' literal env from the template, then local tables, DynamoDB and upstreams.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...Object.assign({}, chat.env, embeddings.env) };
    for (const [name, route] of Object.entries(SIMULATED_BASE)) {
      env[`${name}_API_KEY`] = 'sim-key';
      env[`${name}_BASE_URL`] = simInfo.urls[route];
    }
    Object.assign(env, tables, noRateLimits, {
      DYNAMODB_ENDPOINT: ddb.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    });
    const fn = (f: StackFunction) => ({ dir: f.dir, memoryMb: f.memoryMb, timeoutSeconds: f.timeoutSeconds });
    const setup: GatewaySetup = { chat: fn(chat), embeddings: fn(embeddings) };
    const control = (path: string, body: unknown): Promise<unknown> =>
      fetch(`${simInfo.baseUrl}/__sim/${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const openai = simInfo.urls['openai'];
    if (openai === undefined || ddb.pid === undefined || sim.process.pid === undefined)
      throw new Error('simulator or DynamoDB Local without a pid or OpenAI route');

    return {
      dynamodb: { endpoint: ddb.endpoint, pid: ddb.pid },
      simulator: { pid: sim.process.pid, openaiBaseUrl: openai },
      pace: async (gapMs) => void (await control('chunk-delay', { ms: gapMs }), await control('reset', {})),
      account: async (keys, email, funds = { freeTokens: 0, creditNanoUsd: 1_000 * 1e9 }) => {
        const { accountId } = await createAccount({
          freeTokens: funds.freeTokens,
          creditNanoUsd: funds.creditNanoUsd,
          ...(email === undefined ? {} : { email }),
        });
        const out: string[] = [];
        const limit = funds.keyLimitNanoUsd === undefined ? {} : { limitNanoUsd: funds.keyLimitNanoUsd };
        for (let k = 0; k < keys; k++) out.push((await createKey(accountId, `bench ${k}`, limit)).key);
        return out;
      },
      startGateway: async (over, nodeFlags = []) => {
        // Node flags as deployed (the stack's NODE_OPTIONS, e.g. --enable-source-maps) plus the bench's.
        const flags = [...(env.NODE_OPTIONS ?? '').split(' ').filter(Boolean), ...nodeFlags];
        const child = await startChild(
          'gateway-child.ts',
          { ...env, ...over, NODE_OPTIONS: '', BENCH_GATEWAY: JSON.stringify(setup) },
          join(logDir, 'gateway.log'),
          flags,
          node24,
        );
        stops.push(async () => void (child.process.kill('SIGTERM'), await child.exited));
        return {
          pid: child.process.pid ?? 0,
          origin: String(child.ready.origin),
          idle: async () => void (await child.call('idle')),
          take: async () => (await child.call('take')) as Awaited<ReturnType<Gateway['take']>>,
          replay: async (kind, replay) => void (await child.call('replay', { kind, replay })),
          exit: async () => void (child.call('exit').catch(() => undefined), await child.exited),
        };
      },
      startPortkey: () => startPortkey(logDir, stops),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** CPU time (user + system) of each pid so far, ms; 0 for a pid that is gone. */
export async function cpuMs(pids: number[]): Promise<number[]> {
  const stats: Record<string, { ctime: number } | undefined> = await pidusage(pids).catch(() => ({}));
  return pids.map((pid) => stats[String(pid)]?.ctime ?? 0);
}

/** CPU time all cores have been busy since boot (/proc/stat), ms; NaN without /proc. */
export function machineBusyMs(): number {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).map(Number);
    return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) / 100; // USER_HZ = 100
  } catch {
    return Number.NaN;
  }
}
