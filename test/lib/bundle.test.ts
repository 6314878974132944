import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Template } from 'aws-cdk-lib/assertions';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/key-store';
import { estimatePromptTokens, estimateTextTokens } from '../../functions/shared/usage/estimate';
import { REPO_ROOT } from '../../lib/constructs/gateway-function';
import { ModelmuxStack } from '../../lib/modelmux-stack';
import { stackPropsFromContext } from '../../lib/stack-context';
import { startSimulator, type Simulator } from '../../local/simulator';
import { pollLedgerEntry } from '../support/ledger';
import { createTestTables } from '../support/tables';
import { assetDirOf, logicalIdByPath, testApp } from './template-helpers';

/**
 * The code that `cdk deploy` ships, run as Lambda runs it: both esbuild bundles from a real synth,
 * loaded from their asset folders (index.mjs, with the lazily loaded tokenizer file beside it) by a
 * fresh Node process (fixtures/bundle-host.ts) behind the Function URL stand-in, with credentials
 * only in the environment (as Lambda sets them), against DynamoDB Local and the upstream simulator.
 * What the source-level tests cannot see: the esbuild aliases, the ESM banner, tree-shaking, the
 * tokenizer file path.
 */

const TSX = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
const HOST = join(REPO_ROOT, 'test', 'lib', 'fixtures', 'bundle-host.ts');

let simulator: Simulator;
let host: ChildProcess | undefined;
let client: OpenAI;
let accountId: string;
const bundles: Record<'chat' | 'embeddings', { dir: string; inputs: string[] }> = {
  chat: { dir: '', inputs: [] },
  embeddings: { dir: '', inputs: [] },
};

beforeAll(async () => {
  const app = testApp();
  const stack = new ModelmuxStack(app, 'Modelmux', stackPropsFromContext(app.node));
  const assembly = app.synth();
  const template = Template.fromJSON(assembly.getStackArtifact(stack.artifactId).template as Record<string, unknown>);
  for (const [name, path] of [['chat', '/Chat/'], ['embeddings', '/Embeddings/']] as const) {
    const dir = assetDirOf(template, assembly.directory, logicalIdByPath(template, 'AWS::Lambda::Function', path));
    const meta = JSON.parse(readFileSync(join(dir, 'index.meta.json'), 'utf8')) as { inputs: Record<string, unknown> };
    bundles[name] = { dir, inputs: Object.keys(meta.inputs) };
  }

  await createTestTables('bundle');
  const account = await createAccount({ freeTokens: 1_000_000 });
  accountId = account.accountId;
  const key = await createKey(accountId, 'bundle');

  simulator = await startSimulator();
  host = spawn(TSX, [HOST, join(bundles.chat.dir, 'index.mjs'), join(bundles.embeddings.dir, 'index.mjs')], {
    cwd: REPO_ROOT,
    // As Lambda: credentials and settings in the environment only.
    env: { ...process.env, OPENAI_API_KEY: 'sim-key', OPENAI_BASE_URL: simulator.urls.openai, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: host.stdout as Readable }), 'line')) as [string];
  const { url } = JSON.parse(line) as { url: string };
  client = new OpenAI({ baseURL: `${url.replace(/\/$/, '')}/v1`, apiKey: key.key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  host?.stdin?.end();
  if (host && host.exitCode === null) await once(host, 'exit');
  await simulator?.close();
});

/** The ledger entry of a request (written after the response; polled). */
async function ledgerEntry(requestId: string | null): Promise<Record<string, unknown>> {
  const entry = await pollLedgerEntry(accountId, requestId);
  if (entry === undefined) throw new Error(`no ledger entry for ${requestId}`);
  return entry;
}

describe('the deployed bundles', () => {
  it('carry an environment-only credential chain instead of the SDK default chain', () => {
    for (const { inputs } of Object.values(bundles)) {
      expect(inputs).toContain('functions/shared/store/lambda-credentials.ts');
      expect(inputs.filter((f) => /credential-provider-(node|ini|sso|process|web-identity)\//.test(f))).toEqual([]);
      expect(inputs.filter((f) => f.includes('@aws-sdk/nested-clients'))).toEqual([]);
    }
  });

  it('answer a buffered chat completion and bill it in the ledger', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'bundled hello' }] }).withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]?.message.content).toMatch(/^Echo: bundled hello/);
    const entry = await ledgerEntry(response.headers.get('x-request-id'));
    expect(entry).toMatchObject({ publicModel: 'gpt-4o-mini', promptTokens: data.usage?.prompt_tokens, completionTokens: data.usage?.completion_tokens, usageEstimated: false });
  });

  it('stream a chat completion whose deltas join into the reply, ending in a usage chunk', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'bundled stream' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toMatch(/^Echo: bundled stream/);
    expect(usage?.completion_tokens).toBe(text.split(/\s+/).filter(Boolean).length);
  });

  it('count a cut stream with the tokenizer file shipped beside the bundle, and mark the entry estimated', async () => {
    simulator.setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 3 }, { times: 1 });
    const messages = [{ role: 'user' as const, content: 'bundled cut, counted by the shipped tokenizer' }];
    const { data: stream, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true }).withResponse();
    let text = '';
    await expect(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
    ).rejects.toThrow(/mid-stream/);
    expect(text.length).toBeGreaterThan(0);
    const entry = await ledgerEntry(response.headers.get('x-request-id'));
    // The same o200k counts as the source tree's tokenizer: had the bundle failed to load its tokenizer
    // file, billing would have fallen back to characters / 3 and these would differ.
    expect(entry).toMatchObject({ status: 'partial', usageEstimated: true, promptTokens: await estimatePromptTokens(messages), completionTokens: await estimateTextTokens(text) });
    expect(Math.ceil(text.length / 3)).not.toBe(await estimateTextTokens(text));
  });

  it('answer embeddings from the buffered function', async () => {
    const { data, response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] }).withResponse();
    expect(data.data.map((d) => d.index)).toEqual([0, 1]);
    expect(data.data[0]?.embedding.length).toBeGreaterThan(0);
    expect(await ledgerEntry(response.headers.get('x-request-id'))).toMatchObject({ publicModel: 'text-embedding-3-small', completionTokens: 0 });
  });
});
