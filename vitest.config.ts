import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * The test suite in tiers (vitest projects), chosen by measured file times on a 2-core machine:
 *
 * - `unit`: no DynamoDB, no server, no child process; pure functions and static checks of the source.
 * - `integration`: real handlers against one DynamoDB Local (test/support/global-setup.ts; every file
 *   makes its own tables, so files run in parallel), the simulator and loopback HTTP.
 * - `stack`: the CDK app's template, in ONE worker without isolation so aws-cdk-lib loads once and
 *   each context's stack is synthesised once for every file (test/lib/support/synth.ts).
 * - `slow`: files that take 15 s or more alone, or need Chromium or the Node 24 Lambda runtime.
 *
 * `npm test` runs unit, integration and stack; `npm run test:all` (CI, `.ci/run`) runs every tier;
 * `npx vitest run --project slow` one tier. A new test file is an integration test until listed here.
 *
 * Parallelism: vitest's default is one file at a time on 2 cores (cores − 1), but an integration file
 * mostly waits (on DynamoDB Local, loopback HTTP, an upstream's pacing), so unit and integration files
 * run {@link FILES_AT_ONCE} at a time on any machine. Projects that share a `sequence.groupOrder` must
 * share `maxWorkers`, so the stack tier (one worker) runs after them, and the slow tier (vitest's
 * default) after that when all tiers run in one command.
 */

/** Pure tests: they never touch DynamoDB (the unit tier points the store at a closed port). */
const UNIT = [
  'test/accounts/{api-key,byok-envelope,key-state}.test.ts',
  'test/app/held-json.test.ts',
  'test/bench/cost.test.ts',
  'test/billing/{cache-charge,hold-demand,price}.test.ts',
  'test/catalogue/*.test.ts',
  'test/config/env.test.ts',
  'test/edge/response-encoding.test.ts',
  'test/lib/{doc-citations,import-graph,source-limits}.test.ts',
  'test/local/simulator/{reply,tool-intent}.test.ts',
  'test/messages/errors-and-names.test.ts',
  'test/openai/{chat-request,completion-assembler,openapi-requests,request-bounds}.test.ts',
  'test/providers/**/*.test.ts',
  'test/responses/{stream-events,to-chat}.test.ts',
  'test/routing/{circuit-breaker,exhausted,provider-preferences,request-fallbacks,retry-policy,timeouts}.test.ts',
  'test/retry/*.test.ts',
  'test/sse/*.test.ts',
  'test/store/account-item.test.ts',
  'test/usage/*.test.ts',
  'test/web/{byok-providers,money,security-headers,usage}.test.ts',
];

/** The CDK app's template (synthesis only; the bundles under Lambda's runtime are `slow`). */
const STACK = ['test/lib/{cdk-nag,deploy-readiness,mail-sender,managed-instances,monitoring,runbook,site,stack-options,stack}.test.ts'];

/** 15 s or more alone on a 2-core machine, or a browser / the Node 24 runtime. */
const SLOW = [
  'test/integration/{default-timeouts,settle-durability,fallback,claude-code,gemini-cli,add-provider}.test.ts',
  'test/bin/{admin,smoke}.test.ts',
  'test/lib/lambda-runtime.test.ts',
  'test/web/{accessibility,chromium,dashboard.e2e,payments.e2e}.test.ts',
];

/** Unit and integration files run at the same time (measured on 2 cores: see the comment above). */
const FILES_AT_ONCE = 3;

const common = { setupFiles: ['test/support/worker-env.ts'], testTimeout: 30_000, hookTimeout: 60_000, pool: 'forks' as const };
const withDynamoDb = { ...common, globalSetup: ['test/support/global-setup.ts'] };

const projects: TestProjectInlineConfiguration[] = [
  // Pure tests need no process of their own: worker threads start faster than forks (each has its own process.env copy).
  { test: { ...common, name: 'unit', include: UNIT, pool: 'threads', maxWorkers: FILES_AT_ONCE } },
  { test: { ...withDynamoDb, name: 'integration', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...STACK, ...SLOW], maxWorkers: FILES_AT_ONCE } },
  { test: { ...common, name: 'stack', include: STACK, isolate: false, fileParallelism: false, hookTimeout: 180_000, sequence: { groupOrder: 1 } } },
  { test: { ...withDynamoDb, name: 'slow', include: SLOW, sequence: { groupOrder: 2 } } },
];

export default defineConfig({ test: { projects, reporters: ['default'] } });
