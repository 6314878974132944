/**
 * Everything the load runs against, each in its own process: DynamoDB Local (a JVM, in memory),
 * the upstream simulator (tsx child), and the gateway (tsx child: Function URL stand-in + the real
 * handlers) wired to both. Placement: all on this machine, unpinned; the load generator is the bench
 * process itself.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { startDynamoDbLocal } from '../local/dynamodb-local';
import { startChild, type Child } from './child-process';
import type { GatewayInfo } from './gateway-process';
import { pick } from './json-pick';
import type { SimulatorInfo } from './simulator-process';

const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));

/** The running system. */
export interface SystemUnderTest {
  simulator: Child;
  simulatorInfo: SimulatorInfo;
  gateway: Child;
  gatewayInfo: GatewayInfo;
  dynamodbEndpoint: string;
  /** The gateway's stdout + stderr (its JSON request logs). */
  gatewayLogFile: string;
  /** Stops gateway, simulator and DynamoDB Local (in that order). Idempotent. */
  close(): Promise<void>;
}

/** Provider env prefix → its base URL on the simulator (as local/gateway.ts wires a simulated one). */
const PROVIDER_BASE_URLS: Record<string, (sim: SimulatorInfo) => string | undefined> = {
  OPENAI: (s) => s.urls['openai'],
  ANTHROPIC: (s) => `${s.baseUrl}/anthropic`,
  GEMINI: (s) => s.urls['gemini'],
  DEEPSEEK: (s) => s.urls['deepseek'],
  MINIMAX: (s) => s.urls['minimax'],
  TOGETHER: (s) => s.urls['together'],
  DEEPINFRA: (s) => s.urls['deepinfra'],
  GROQ: (s) => s.urls['groq'],
};

/**
 * The gateway's environment: what the deployed functions get (gateway-function.ts: source maps on,
 * Powertools service name and INFO logging; table names, set by startGateway) plus, as `npm start`
 * does locally, upstream keys and base URLs in plain env instead of the Secrets Manager secret.
 */
function gatewayEnv(sim: SimulatorInfo, dynamodbEndpoint: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (/_API_KEY$|_BASE_URL$|^UPSTREAM_SECRET_ARN$|^KEYS_TABLE$|^ACCOUNTS_TABLE$|^LEDGER_TABLE$/.test(name)) delete env[name];
  for (const [provider, url] of Object.entries(PROVIDER_BASE_URLS)) {
    const base = url(sim);
    if (base === undefined) throw new Error(`simulator has no route for ${provider}`);
    env[`${provider}_API_KEY`] = 'sim-key';
    env[`${provider}_BASE_URL`] = base;
  }
  return {
    ...env,
    NODE_OPTIONS: '--enable-source-maps',
    POWERTOOLS_SERVICE_NAME: 'modelmux',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    DYNAMODB_ENDPOINT: dynamodbEndpoint,
    // The bench measures throughput, not the rate limits: the dev account is free tier (20 per minute).
    RATE_LIMIT_RPM: '0',
    RATE_LIMIT_CONCURRENT: '0',
    RATE_LIMIT_FREE_RPM: '0',
    RATE_LIMIT_FREE_CONCURRENT: '0',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // Fresh tables per run, so an external DynamoDB is never shared with an earlier run's data.
    BENCH_TABLE_PREFIX: `bench-${randomBytes(3).toString('hex')}`,
  };
}

function asSimulatorInfo(info: unknown): SimulatorInfo {
  const baseUrl = pick(info, 'baseUrl');
  const urls = pick(info, 'urls');
  if (typeof baseUrl !== 'string' || typeof urls !== 'object' || urls === null) throw new Error('simulator child: bad ready message');
  return { baseUrl, urls: Object.fromEntries(Object.entries(urls).map(([k, v]) => [k, String(v)])) };
}

function asGatewayInfo(info: unknown): GatewayInfo {
  const baseUrl = pick(info, 'baseUrl');
  const apiKey = pick(info, 'apiKey');
  const accountId = pick(info, 'accountId');
  if (typeof baseUrl !== 'string' || typeof apiKey !== 'string' || typeof accountId !== 'string') throw new Error('gateway child: bad ready message');
  return { baseUrl, apiKey, accountId };
}

/**
 * Starts the three processes. `logDir` receives `simulator.log` and `gateway.log` (the gateway's
 * JSON request logs). `replyWords`: reply length of the simulator, words (= completion tokens).
 * @throws Error (with the child's log tail) when one does not start; whatever started is stopped.
 */
export async function startSystemUnderTest(logDir: string, replyWords: number): Promise<SystemUnderTest> {
  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    // DYNAMODB_ENDPOINT (as for `npm start`): an already running DynamoDB instead of a new DynamoDB Local.
    let endpoint = process.env.DYNAMODB_ENDPOINT;
    if (!endpoint) {
      const ddb = await startDynamoDbLocal();
      closers.push(ddb.stop);
      endpoint = ddb.endpoint;
    }
    const simulator = await startChild({
      label: 'simulator',
      entry: join(BENCH_DIR, 'simulator-process.ts'),
      env: { ...process.env, BENCH_REPLY_WORDS: String(replyWords) },
      logFile: join(logDir, 'simulator.log'),
    });
    closers.push(() => simulator.stop());
    const simulatorInfo = asSimulatorInfo(simulator.info);
    const gatewayLogFile = join(logDir, 'gateway.log');
    const gateway = await startChild({
      label: 'gateway',
      entry: join(BENCH_DIR, 'gateway-process.ts'),
      env: gatewayEnv(simulatorInfo, endpoint),
      logFile: gatewayLogFile,
    });
    closers.push(() => gateway.stop());
    return { simulator, simulatorInfo, gateway, gatewayInfo: asGatewayInfo(gateway.info), dynamodbEndpoint: endpoint, gatewayLogFile, close };
  } catch (err) {
    await close();
    throw err;
  }
}
