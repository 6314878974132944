/**
 * Child process: the gateway exactly as `npm start` runs it (Function URL stand-in + the real Lambda
 * handlers, DynamoDB billing on), in its own process so the load generator and the simulator do not
 * share its event loop. Upstream base URLs and DynamoDB come from the environment bench/run.ts sets
 * (`*_BASE_URL` → the simulator child, `DYNAMODB_ENDPOINT` → DynamoDB Local), so `startGateway`
 * starts neither itself.
 *
 * Commands: `store-calls` (DynamoDB calls by operation since the last reset), `reset-store-calls`,
 * `memory` (process.memoryUsage(), bytes), `profile-start` {intervalUs}, `profile-stop` {file}.
 */
import { startGateway } from '../local/gateway';
import { documentClient } from '../functions/shared/store/dynamo';
import { startCpuProfile, stopCpuProfile } from './cpu-profiler';
import { serveParent } from './ipc';
import { installStoreCallCounter } from './store-call-counter';

/** What the gateway child reports when ready. */
export interface GatewayInfo {
  /** OpenAI base URL, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  accountId: string;
}

/** Free tokens of the bench account: enough that no request is ever refused with 402. */
const BENCH_FREE_TOKENS = 1e12;

const endpoint = process.env.DYNAMODB_ENDPOINT;
if (!endpoint) throw new Error('DYNAMODB_ENDPOINT must be set by bench/run.ts');
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';

// Before any handler is imported: every store call of the gateway goes through this client.
const counter = installStoreCallCounter(documentClient());

const gateway = await startGateway({ dynamodbEndpoint: endpoint, tablePrefix: process.env.BENCH_TABLE_PREFIX ?? 'bench', devFreeTokens: BENCH_FREE_TOKENS });
const simulated = Object.entries(gateway.providers).filter(([, how]) => how === 'simulated');
if (simulated.length > 0) throw new Error(`expected every upstream from the environment, but startGateway simulated ${simulated.map(([n]) => n).join(', ')}`);

let closing = false;
const shutdown = (): void => {
  if (closing) return;
  closing = true;
  void gateway.close().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

const info: GatewayInfo = { baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, accountId: gateway.accountId };
serveParent(
  info,
  {
    'store-calls': async () => counter.snapshot(),
    'reset-store-calls': async () => {
      counter.reset();
      return true;
    },
    memory: async () => process.memoryUsage(),
    'profile-start': async (arg) => {
      await startCpuProfile(typeof arg === 'number' ? arg : undefined);
      return true;
    },
    'profile-stop': async (arg) => {
      if (typeof arg !== 'string') throw new Error('profile-stop needs a file path');
      return stopCpuProfile(arg);
    },
  },
  shutdown,
);
