/**
 * Everything the bench runs against, each in its own process so each one's CPU can be read apart
 * (pidusage): DynamoDB Local (a JVM), the upstream simulator, and the gateway (the deployed bundles
 * behind the Function URL stand-in). The bench process itself is the client. All on this machine.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pidusage from 'pidusage';
import { SIMULATED_BASE } from '../local/gateway';
import { ensureTables, startDynamoDbLocal } from '../local/dynamodb-local';
import type { AwsCalls } from './aws-calls';
import type { GatewaySetup, Replay } from './gateway-child';
import type { StackFunction } from './stack';

/** A child process that speaks the bench's IPC (`ready`, then `{id, command, arg}` → `{id, result}`). */
interface Child {
  process: ChildProcess;
  ready: Record<string, unknown>;
  call(command: string, arg?: unknown): Promise<unknown>;
  /** Waits for the child to exit (after `exit`, or a signal). */
  exited: Promise<void>;
}

const entry = (name: string): string => fileURLToPath(new URL(name, import.meta.url));
const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((c) => c.kill('SIGKILL')));

/**
 * Forks a TypeScript entry under tsx, output to `logFile`, and waits for its `ready` message.
 * @throws Error when it exits or stays silent for 60 s first.
 */
async function startChild(file: string, env: NodeJS.ProcessEnv, logFile: string, nodeFlags: string[] = []): Promise<Child> {
  const log = openSync(logFile, 'a');
  const child = fork(entry(file), [], { env, execArgv: ['--import', 'tsx', ...nodeFlags], stdio: ['ignore', log, log, 'ipc'] });
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
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m as Record<string, unknown>);
      } else if (m.type === 'reply' && m.id !== undefined) {
        waiting.get(m.id)?.(m.result);
        waiting.delete(m.id);
      }
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

/** What the gateway reported since the last take. */
export interface GatewayTake {
  calls: AwsCalls;
  logBytes: number;
  logLines: number;
}

/** A running gateway child. */
export interface Gateway {
  pid: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Resolves once no invocation is running (streamed chat settles after its response ends). */
  idle(): Promise<void>;
  take(): Promise<GatewayTake>;
  /** Makes `/bench/replay/<kind>` and `/bench/replay-buffered/<kind>` answer `replay`. */
  replay(kind: string, replay: Replay): Promise<void>;
  /** Ends the process cleanly (a `--cpu-prof` profile is written) and waits for it. */
  exit(): Promise<void>;
}

/** The processes under test. */
export interface System {
  dynamodb: { endpoint: string; pid: number };
  simulator: { pid: number; baseUrl: string; openaiBaseUrl: string };
  /** Sets the simulator's gap between stream events and clears its request log. */
  pace(gapMs: number): Promise<void>;
  /** The bench account's API key (10¹² free tokens: never a 402). */
  apiKey: string;
  /** Starts a gateway on the bundles of `chat` and `embeddings`; `nodeFlags` e.g. `--cpu-prof`. */
  startGateway(nodeFlags?: string[]): Promise<Gateway>;
  stop(): Promise<void>;
}

/** The gateway's env: the functions' own literal env from the template, then local tables, DynamoDB and upstreams. */
function gatewayEnv(fns: StackFunction[], endpoint: string, sim: { baseUrl: string; urls: Record<string, string> }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...Object.assign({}, ...fns.map((f) => f.env)) };
  for (const [name, route] of Object.entries(SIMULATED_BASE)) {
    env[`${name}_API_KEY`] = 'sim-key';
    env[`${name}_BASE_URL`] = sim.urls[route];
  }
  // Rate limits off: the bench measures throughput on one free-tier dev account (20 requests per minute by default).
  const noRateLimits = { RATE_LIMIT_RPM: '0', RATE_LIMIT_CONCURRENT: '0', RATE_LIMIT_FREE_RPM: '0', RATE_LIMIT_FREE_CONCURRENT: '0' };
  return { ...env, ...noRateLimits, DYNAMODB_ENDPOINT: endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
}

/**
 * Starts DynamoDB Local (in memory), the simulator, fresh tables and the bench account.
 * Logs go to `logDir` (emptied first). Whatever started is stopped again when a later step fails.
 */
export async function startSystem(chat: StackFunction, embeddings: StackFunction, logDir: string): Promise<System> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
  };
  for (const log of ['simulator.log', 'gateway.log']) writeFileSync(`${logDir}/${log}`, ''); // this run's only
  try {
    const ddb = await startDynamoDbLocal();
    stops.push(ddb.stop);
    const sim = await startChild('simulator-child.ts', { ...process.env }, `${logDir}/simulator.log`);
    stops.push(async () => void (sim.process.kill('SIGTERM'), await sim.exited));
    const simInfo = sim.ready as unknown as { baseUrl: string; urls: Record<string, string> };

    const prefix = `bench-${randomBytes(3).toString('hex')}`;
    const tables = { keys: `${prefix}-keys`, accounts: `${prefix}-accounts`, ledger: `${prefix}-ledger`, responses: `${prefix}-responses` };
    Object.assign(process.env, { DYNAMODB_ENDPOINT: ddb.endpoint, KEYS_TABLE: tables.keys, ACCOUNTS_TABLE: tables.accounts, LEDGER_TABLE: tables.ledger, RESPONSES_TABLE: tables.responses });
    const { documentClient } = await import('../functions/shared/store/dynamo');
    await ensureTables(documentClient(), tables);
    const { createAccount } = await import('../functions/shared/accounts/account-store');
    const { createKey } = await import('../functions/shared/accounts/key-store');
    const apiKey = (await createKey((await createAccount({ freeTokens: 1e12 })).accountId, 'bench')).key;

    const env: NodeJS.ProcessEnv = { ...gatewayEnv([chat, embeddings], ddb.endpoint, simInfo), KEYS_TABLE: tables.keys, ACCOUNTS_TABLE: tables.accounts, LEDGER_TABLE: tables.ledger, RESPONSES_TABLE: tables.responses };
    const setup: GatewaySetup = {
      chat: { dir: chat.dir, memoryMb: chat.memoryMb, timeoutSeconds: chat.timeoutSeconds },
      embeddings: { dir: embeddings.dir, memoryMb: embeddings.memoryMb, timeoutSeconds: embeddings.timeoutSeconds },
    };
    const control = (path: string, body: unknown): Promise<unknown> => fetch(`${simInfo.baseUrl}/__sim/${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const openai = simInfo.urls['openai'];
    if (openai === undefined || ddb.pid === undefined || sim.process.pid === undefined) throw new Error('simulator or DynamoDB Local without a pid or OpenAI route');

    return {
      dynamodb: { endpoint: ddb.endpoint, pid: ddb.pid },
      simulator: { pid: sim.process.pid, baseUrl: simInfo.baseUrl, openaiBaseUrl: openai },
      pace: async (gapMs) => void (await control('chunk-delay', { ms: gapMs }), await control('reset', {})),
      apiKey,
      startGateway: async (nodeFlags = []) => {
        // Node flags as deployed (the stack's NODE_OPTIONS, e.g. --enable-source-maps) plus the bench's.
        const flags = [...(env.NODE_OPTIONS ?? '').split(' ').filter(Boolean), ...nodeFlags];
        const child = await startChild('gateway-child.ts', { ...env, NODE_OPTIONS: '', BENCH_GATEWAY: JSON.stringify(setup) }, `${logDir}/gateway.log`, flags);
        const stopGateway = async () => void (child.process.kill('SIGTERM'), await child.exited);
        stops.push(stopGateway);
        return {
          pid: child.process.pid ?? 0,
          origin: String(child.ready.origin),
          idle: async () => void (await child.call('idle')),
          take: async () => (await child.call('take')) as GatewayTake,
          replay: async (kind, replay) => void (await child.call('replay', { kind, replay })),
          exit: async () => void (child.call('exit').catch(() => undefined), await child.exited),
        };
      },
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

/** CPU time all cores have been busy since boot (/proc/stat: user, nice, system, irq, softirq, steal), ms; NaN without /proc. */
export function machineBusyMs(): number {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).map(Number);
    return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) / 100; // USER_HZ = 100
  } catch {
    return Number.NaN;
  }
}
