import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { ORIGIN_SECRET_HEADER } from '../../functions/shared/config/stack-contract';
import type { TableNames } from '../../functions/shared/store/tables';
import { estimateTextTokens } from '../../functions/shared/usage/estimate';
import { estimateChatPromptTokens } from '../../functions/shared/usage/prompt-tokens';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue';
import { ModelmuxStack } from '../../lib/modelmux-stack';
import { stackPropsFromContext } from '../../lib/stack-context';
import { startSimulator, type Simulator } from '../../local/simulator';
import { startFunctionUrlFront } from '../support/lambda-runtime/function-url-front';
import { LambdaRuntime } from '../support/lambda-runtime/runtime-api';
import { LAMBDA_NODE_VERSION, runtimeProblem } from '../support/lambda-runtime/versions';
import { accountItem, pollLedgerEntry } from '../support/ledger';
import { startSecretsManagerStub, type SecretsManagerStub } from '../support/secrets-manager';
import { createTestTables } from '../support/tables';
import { assetDirOf, logicalIdByPath, resourcesOfType, testApp } from './template-helpers';

/**
 * The code `cdk deploy` ships, run as Lambda's nodejs24.x runs it: both esbuild bundles from a real
 * synth (with tracing, so the tracer file is beside them), each loaded by Amazon's runtime interface
 * client (aws-lambda-ric) on Node 24 in its own process, behind a loopback Runtime API and a Function
 * URL front (test/support/lambda-runtime/), with the function's environment from the template, against
 * DynamoDB Local, the upstream simulator and a Secrets Manager stand-in for the origin secret.
 * What the source-level tests cannot see: the esbuild aliases, the ESM banner, the lazily loaded files,
 * the real `awslambda` globals and streaming protocol, Node 24.
 */

const ORIGIN_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:OriginSecret-AbC123';
const ORIGIN_VALUE = 'cf-origin-secret-value';

let simulator: Simulator;
let secretsManager: SecretsManagerStub;
let xrayDaemon: Socket;
const xraySegments: Array<Record<string, unknown>> = [];
let chat: LambdaRuntime;
let embeddings: LambdaRuntime;
let front: Awaited<ReturnType<typeof startFunctionUrlFront>>;
let client: OpenAI;
let baseURL: string;
/** The shutdown-extension layer's asset (as Lambda unpacks it in /opt), and the chat function's env. */
let layerDir: string;
let chatEnvironment: Record<string, string>;
let apiKey: string;
let accountId: string;
const bundles: Record<'chat' | 'embeddings', { dir: string; inputs: string[]; env: Record<string, string> }> = {
  chat: { dir: '', inputs: [], env: {} },
  embeddings: { dir: '', inputs: [], env: {} },
};

beforeAll(async () => {
  const problem = runtimeProblem();
  if (problem !== undefined) throw new Error(problem);

  const app = testApp({ tracing: 'true' });
  const stack = new ModelmuxStack(app, 'Modelmux', stackPropsFromContext(app.node));
  const assembly = app.synth();
  const template = Template.fromJSON(assembly.getStackArtifact(stack.artifactId).template as Record<string, unknown>);
  for (const [name, path] of [
    ['chat', '/Chat/'],
    ['embeddings', '/Embeddings/'],
  ] as const) {
    const fnId = logicalIdByPath(template, 'AWS::Lambda::Function', path);
    const dir = assetDirOf(template, assembly.directory, fnId);
    const meta = JSON.parse(readFileSync(join(dir, 'index.meta.json'), 'utf8')) as { inputs: Record<string, unknown> };
    const variables = (resourcesOfType(template, 'AWS::Lambda::Function')[fnId]?.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    // The template's literal settings (NODE_OPTIONS, POWERTOOLS_*, budgets); references are filled below.
    const env = Object.fromEntries(Object.entries(variables).filter((e): e is [string, string] => typeof e[1] === 'string' && !Token.isUnresolved(e[1])));
    bundles[name] = { dir, inputs: Object.keys(meta.inputs), env };
  }
  const layerId = logicalIdByPath(template, 'AWS::Lambda::LayerVersion', '/ShutdownExtension/');
  const layerKey = String((resourcesOfType(template, 'AWS::Lambda::LayerVersion')[layerId]?.Properties?.Content as { S3Key?: string }).S3Key);
  layerDir = join(assembly.directory, `asset.${layerKey.replace(/\.zip$/, '')}`);

  const tables: TableNames = await createTestTables('ric');
  const account = await createAccount({ freeTokens: 1_000_000 });
  accountId = account.accountId;
  apiKey = (await createKey(accountId, 'ric')).key;
  simulator = await startSimulator();
  secretsManager = await startSecretsManagerStub();
  secretsManager.secrets.set(ORIGIN_ARN, JSON.stringify({ current: ORIGIN_VALUE }));
  xrayDaemon = createSocket('udp4');
  xrayDaemon.on('message', (msg) => {
    // X-Ray daemon protocol: a JSON header line, then the segment document.
    const [, document] = msg.toString('utf8').split('\n');
    if (document) xraySegments.push(JSON.parse(document) as Record<string, unknown>);
  });
  xrayDaemon.bind(0, '127.0.0.1');
  await once(xrayDaemon, 'listening');

  // As Lambda: credentials and settings in the environment only; POWERTOOLS_TRACE_ENABLED comes from
  // the (tracing) template and is taken off the chat function, which thus runs as deployed by default.
  const lambdaEnv = (name: 'chat' | 'embeddings'): Record<string, string> => ({
    ...bundles[name].env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT ?? '',
    KEYS_TABLE: tables.keys,
    ACCOUNTS_TABLE: tables.accounts,
    LEDGER_TABLE: tables.ledger,
    ORIGIN_SECRET_ARN: ORIGIN_ARN,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.endpoint,
    OPENAI_API_KEY: 'sim-key',
    OPENAI_BASE_URL: simulator.urls.openai,
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${xrayDaemon.address().port}`,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  const chatEnv = lambdaEnv('chat');
  delete chatEnv.POWERTOOLS_TRACE_ENABLED;
  chatEnvironment = chatEnv;
  [chat, embeddings] = await Promise.all([
    LambdaRuntime.start({ functionName: 'Modelmux-Chat', taskRoot: bundles.chat.dir, env: chatEnv, timeoutMs: 300_000 }),
    LambdaRuntime.start({ functionName: 'Modelmux-Embeddings', taskRoot: bundles.embeddings.dir, env: lambdaEnv('embeddings'), timeoutMs: 30_000 }),
  ]);
  front = await startFunctionUrlFront([
    { match: (p) => p.startsWith('/v1/embeddings'), runtime: embeddings, functionName: 'Modelmux-Embeddings', traced: true },
    { match: () => true, runtime: chat, functionName: 'Modelmux-Chat' },
  ]);
  baseURL = `${front.url}v1`;
  // As CloudFront: every request carries the origin secret.
  client = new OpenAI({ baseURL, apiKey, maxRetries: 0, defaultHeaders: { [ORIGIN_SECRET_HEADER]: ORIGIN_VALUE } });
}, 300_000);

afterAll(async () => {
  await front?.close();
  await Promise.all([chat?.stop(), embeddings?.stop()]);
  await simulator?.close();
  await secretsManager?.close();
  xrayDaemon?.close();
});

/** The ledger entry of a request (written after the response; polled), of the file's account unless given. */
async function ledgerEntry(requestId: string | null, of = accountId): Promise<Record<string, unknown>> {
  const entry = await pollLedgerEntry(of, requestId);
  if (entry === undefined) throw new Error(`no ledger entry for ${requestId}`);
  return entry;
}

describe(`the deployed bundles under aws-lambda-ric on Node ${LAMBDA_NODE_VERSION}`, () => {
  it('run on the Lambda Node major, with an environment-only credential chain instead of the SDK default chain', () => {
    expect(chat.output.join('')).not.toMatch(/Error|Warning: /);
    for (const { inputs } of Object.values(bundles)) {
      expect(inputs).toContain('functions/shared/store/lambda-credentials.ts');
      expect(inputs.filter((f) => /credential-provider-(node|ini|sso|process|web-identity)\//.test(f))).toEqual([]);
      expect(inputs.filter((f) => /aws-xray-sdk|powertools\/tracer/.test(f))).toEqual([]);
    }
  });

  it('answer a buffered chat completion, bill it, and publish its metrics (EMF) on stdout', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'runtime hello' }] })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]?.message.content).toMatch(/^Echo: runtime hello/);
    const requestId = response.headers.get('x-request-id');
    const entry = await ledgerEntry(requestId);
    expect(entry).toMatchObject({
      publicModel: 'gpt-4o-mini',
      promptTokens: data.usage?.prompt_tokens,
      completionTokens: data.usage?.completion_tokens,
      usageEstimated: false,
    });
    await expect
      .poll(() =>
        chat.output
          .join('')
          .split('\n')
          .find((l) => l.includes('"_aws"') && l.includes(`"requestId":"${requestId}"`) && l.includes('"Requests"')),
      )
      .toBeTruthy();
  });

  it('stream a chat completion chunk by chunk as it is produced, ending in a usage chunk', async () => {
    simulator.setChunkDelay(40);
    try {
      const { data: stream, response } = await client.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'runtime stream of several words' }],
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      // The SDK's fetch asks for gzip: the stream's content-encoding crosses the runtime's prelude unchanged.
      expect(response.headers.get('content-encoding')).toBe('gzip');
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      const arrivals: number[] = [];
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) arrivals.push(Date.now());
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      expect(text).toMatch(/^Echo: runtime stream of several words/);
      expect(usage?.completion_tokens).toBe(text.split(/\s+/).filter(Boolean).length);
      // Relayed as produced (40 ms apart upstream), not gathered and sent at the end.
      expect(arrivals.length).toBeGreaterThanOrEqual(4);
      expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(80);
    } finally {
      simulator.setChunkDelay(0);
    }
  });

  it('answer an error before the first byte with its own status and OpenAI body through the stream prelude', async () => {
    simulator.setFault({ provider: 'openai' }, { kind: 'status', status: 503 });
    try {
      const failed = await client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'nobody home' }], stream: true })
        .catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
      expect(failed).toMatchObject({ status: 503, error: { type: 'server_error', code: 'upstream_unavailable' } });
    } finally {
      simulator.clearFaults();
    }
    const refused = await new OpenAI({
      baseURL,
      apiKey: 'sk-mux-unknown',
      maxRetries: 0,
      defaultHeaders: { [ORIGIN_SECRET_HEADER]: ORIGIN_VALUE },
    }).chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('end a cut stream with an error event, and bill it with the tokenizer file shipped beside the bundle', async () => {
    simulator.setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 3 }, { times: 1 });
    const messages = [{ role: 'user' as const, content: 'runtime cut, counted by the shipped tokenizer' }];
    const { data: stream, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true }).withResponse();
    let text = '';
    await expect(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
    ).rejects.toThrow(/mid-stream/);
    expect(text.length).toBeGreaterThan(0);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const entry = await ledgerEntry(response.headers.get('x-request-id'));
    // The same o200k counts as the source tree's tokenizer: had the bundle failed to load its tokenizer
    // file, billing would have fallen back to characters / 3 and these would differ.
    expect(entry).toMatchObject({
      status: 'partial',
      usageEstimated: true,
      promptTokens: await estimateChatPromptTokens(
        chatCompletionRequest.parse({ model: 'gpt-4o-mini', messages, stream: true }),
        CATALOGUE.get('gpt-4o-mini')!.targets[0]!,
      ),
      completionTokens: await estimateTextTokens(text),
    });
    expect(Math.ceil(text.length / 3)).not.toBe(await estimateTextTokens(text));
  });

  it('answer embeddings from the buffered function, with the upstream call and the settle as X-Ray subsegments', async () => {
    const { data, response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] }).withResponse();
    expect(data.data.map((d) => d.index)).toEqual([0, 1]);
    // gzip through the buffered path: base64 (`isBase64Encoded`) from the function, bytes on the wire.
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(await ledgerEntry(response.headers.get('x-request-id'))).toMatchObject({ publicModel: 'text-embedding-3-small', completionTokens: 0 });
    await expect.poll(() => xraySegments.map((s) => s.name), { timeout: 5_000 }).toEqual(expect.arrayContaining(['upstream', 'settle']));
    const upstream = xraySegments.find((s) => s.name === 'upstream');
    expect(upstream).toMatchObject({ type: 'subsegment', annotations: { target: 'openai:text-embedding-3-small', outcome: 'ok' } });
    expect(String(upstream?.trace_id)).toMatch(/^1-[0-9a-f]{8}-[0-9a-f]{24}$/);
    expect(Number(upstream?.end_time)).toBeGreaterThanOrEqual(Number(upstream?.start_time));
  });

  it('refuse a direct call without the origin secret with 403 and an OpenAI body, on both functions', async () => {
    const direct = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
    for (const call of [() => direct.models.list(), () => direct.embeddings.create({ model: 'text-embedding-3-small', input: 'x' })]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(err).toMatchObject({ status: 403, error: { type: 'permission_error', code: 'direct_access_forbidden' } });
    }
  });
});

describe('shutdown: an external extension in a layer, so Lambda sends the runtime SIGTERM', () => {
  /** One request on a fresh account through a fresh chat environment (with or without the layer), then the environment's end. */
  async function leaseThenShutdown(
    optDir: string | undefined,
  ): Promise<{ runtime: LambdaRuntime; leasesBefore: string[]; leasesAfter: string[]; used: number; item: Record<string, unknown> }> {
    const { accountId: id } = await createAccount({ freeTokens: 1_000_000 });
    const key = (await createKey(id, 'shutdown')).key;
    // A frozen container's idle timer never runs: an idle time longer than the test stands in for the freeze.
    const env = { ...chatEnvironment, CREDIT_LEASE_IDLE_MS: '600000' };
    const runtime = await LambdaRuntime.start({ functionName: 'Modelmux-Chat', taskRoot: bundles.chat.dir, env, timeoutMs: 300_000, optDir });
    const own = await startFunctionUrlFront([{ match: () => true, runtime, functionName: 'Modelmux-Chat' }]);
    const leases = async (): Promise<string[]> => Object.keys((await accountItem(id)).holds ?? {}).filter((h) => h.startsWith('lease_'));
    try {
      const api = new OpenAI({ baseURL: `${own.url}v1`, apiKey: key, maxRetries: 0, defaultHeaders: { [ORIGIN_SECRET_HEADER]: ORIGIN_VALUE } });
      const { response } = await api.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'lease me' }] }).withResponse();
      const used = Number((await ledgerEntry(response.headers.get('x-request-id'), id)).freeTokensUsed);
      const leasesBefore = await leases();
      // Lambda ends an environment only between invocations: after the handler's own after-answer work.
      await runtime.idle();
      await runtime.stop();
      return { runtime, leasesBefore, leasesAfter: await leases(), used, item: await accountItem(id) };
    } finally {
      await own.close();
      await runtime.stop();
    }
  }

  it('with the layer: the extension registers for SHUTDOWN only, and the lease is back on the account when the environment ends', async () => {
    const { runtime, leasesBefore, leasesAfter, used, item } = await leaseThenShutdown(layerDir);
    expect(runtime.registeredExtensions).toEqual([{ name: 'modelmux-shutdown', events: ['SHUTDOWN'] }]);
    expect(leasesBefore).toHaveLength(1);
    expect(leasesAfter).toEqual([]);
    // Charged exactly what its one request used; the rest of the slice is back.
    expect(used).toBeGreaterThan(0);
    expect(item).toMatchObject({ freeTokens: 1_000_000 - used, heldFreeTokens: 0, usedFreeTokens: used });
  });

  it('without it (no SIGTERM, as Lambda does): the lease stays on the account for the orphan sweep', async () => {
    const { runtime, leasesBefore, leasesAfter, item } = await leaseThenShutdown(undefined);
    expect(runtime.registeredExtensions).toEqual([]);
    expect(leasesBefore).toHaveLength(1);
    expect(leasesAfter).toEqual(leasesBefore);
    expect(Number(item.heldFreeTokens)).toBeGreaterThan(0);
  });
});
