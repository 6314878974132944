import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startCognitoLocal, type RunningCognitoLocal } from './cognito-local';
import { startDynamoDbLocal, ensureTables } from './dynamodb-local';
import { startSimulator, type Simulator, type SimulatorOptions } from './simulator';
import { createFunctionUrlServer, installAwslambdaGlobals, listen, type InvocationRecord } from './function-url';
import { startLocalStripe, type LocalStripe, type LocalStripeOptions } from './stripe/local-stripe';
import { startLocalMail, type LocalMail, type LocalMailOptions } from './mail/local-mail';
import { startSettleRunner, type SettleRunner, type SettleRunnerOptions } from './settle-runner';
import { createStaticSite } from './site/static-site';
import { WEB_DIST_DIR } from '../web/build';
import { PROVIDER_MANIFEST, type ProviderName } from '../functions/shared/providers/manifest';
import { reloadConfig } from '../functions/shared/config/env';
import { STRIPE_WEBHOOK_PATH } from '../functions/shared/account-api/paths';

/**
 * The whole gateway on loopback, as `npm start`, the integration tests and the bench run it:
 * DynamoDB Local (or `DYNAMODB_ENDPOINT`), the tables, the upstream simulator for every provider
 * without a real key, a dev account and key, and the REAL Lambda handlers behind the Function URL
 * stand-in.
 */

/**
 * Which simulator provider stands in for each provider's base URL (`sim.urls[name]`), keyed by the
 * provider's variable prefix (`OPENAI` for `OPENAI_API_KEY`): every provider of the manifest (the bench
 * wires its gateway the same way).
 */
export const SIMULATED_BASE: Readonly<Record<string, ProviderName>> = Object.fromEntries(PROVIDER_MANIFEST.map((p) => [p.name.toUpperCase(), p.name]));

export interface GatewayOptions {
  /** Port of the gateway (0 = any free port). */
  port?: number;
  /** Keep DynamoDB Local's data here (git-ignored); omitted = in memory. Ignored with an endpoint. */
  dataDir?: string;
  /** Use this DynamoDB instead of starting DynamoDB Local. */
  dynamodbEndpoint?: string;
  /** Table-name prefix (tests use a unique one per file). */
  tablePrefix?: string;
  /** Where the dev key is remembered across restarts; omitted = a new key every start. */
  devKeyFile?: string;
  simulator?: SimulatorOptions;
  /** Free tokens of the dev account (default: a new account's 200,000). */
  devFreeTokens?: number;
  /**
   * Simulated credit of the dev account, nano-USD (default 0: a free-tier account). `npm start` gives
   * it some, so the operator's own key is paid tier (paid rate limits); an existing dev account that
   * never had credit gets it on the next start.
   */
  devCreditNanoUsd?: number;
  /**
   * Let the handler see a client disconnect (NOT Lambda behaviour; see local/function-url/server.ts),
   * so a streamed request's upstream is aborted when its client leaves. Default false: as in Lambda.
   */
  signalClientDisconnect?: boolean;
  /** Called after each Function URL invocation, naming the function that served it (tests of the path routing). */
  onInvocation?: (record: InvocationRecord) => void;
  /** The chat function's timeout (ms; default 300,000, as deployed). */
  chatTimeoutMs?: number;
  /** The durable settle path (SQS emulator, poller, sweep timer); see local/settle-runner.ts. */
  settle?: SettleRunnerOptions;
  /** Write `.local/state.json` (DynamoDB endpoint, tables, dev account) for the admin CLI to find. */
  stateFile?: string;
  /**
   * Where the built dashboard is (default web/dist; `npm run build:web` writes it). It is served at
   * `/` and every other non-API path, as CloudFront serves the site bucket; `false` = no dashboard.
   */
  siteDir?: string | false;
  /**
   * Run the Cognito emulator and point the account function at its pool (`npm start`, account tests).
   * `dataDir` keeps its users across restarts (default: a temporary directory, removed at close).
   * Default off: the account API then answers 503 `sign_in_not_configured`.
   */
  cognito?: { dataDir?: string; port?: number; onCode?: (email: string, code: string) => void };
  /** The local key-encryption key for BYOK (default: a new one in a temporary directory). */
  byokKekFile?: string;
  /**
   * Run the local Stripe stand-in (local/stripe/) and enable payments against it, unless
   * `STRIPE_SECRET_KEY` is set (then that Stripe is used). The webhook signing secret is
   * `STRIPE_WEBHOOK_SECRET` from the env, else the one in `webhookSecretFile` (generated there once),
   * else a new one. Default off: payments disabled.
   */
  stripe?: LocalStripeOptions;
  /** Email: an SMTP catch-all and an SES stand-in (local/mail/); default off (no EMAIL_FROM: email disabled). */
  mail?: LocalMailOptions;
}

export interface RunningGateway {
  /** OpenAI base URL, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  accountId: string;
  dynamodbEndpoint: string;
  simulator: Simulator | undefined;
  /** The settle queue, its poller and the sweep. */
  settle: SettleRunner;
  /** provider variable prefix → 'real' | 'simulated'. */
  providers: Record<string, 'real' | 'simulated'>;
  /** `http://127.0.0.1:<port>`: the site root (dashboard, `/config.json`, the account API under /v1). */
  origin: string;
  /** The Cognito emulator, when started. */
  cognito: RunningCognitoLocal | undefined;
  /** The Stripe stand-in, when started, and the webhook signing secret in use. */
  stripe: LocalStripe | undefined;
  /** The mail catch-all, when started. */
  mail: LocalMail | undefined;
  close(): Promise<void>;
}

/** Paths the account function serves (functions/shared/account-api/router.ts ACCOUNT_PATH_PATTERNS). */
function isAccountPath(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : path === p));
}

/** Starts everything; env is set before the handlers are imported, so they read it at load. */
export async function startGateway(opts: GatewayOptions = {}): Promise<RunningGateway> {
  const closers: Array<() => Promise<void>> = [];
  try {
    let endpoint = opts.dynamodbEndpoint ?? process.env.DYNAMODB_ENDPOINT;
    if (endpoint === undefined) {
      const ddb = await startDynamoDbLocal(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir });
      closers.push(ddb.stop);
      endpoint = ddb.endpoint;
    }
    process.env.DYNAMODB_ENDPOINT = endpoint;
    // DynamoDB Local serialises transactions: under load it answers in seconds where DynamoDB takes ms.
    process.env.DYNAMODB_REQUEST_TIMEOUT_MS ??= '10000';
    // Every local sign-up comes from 127.0.0.1: no per-network limit of free grants unless asked for.
    process.env.SIGNUP_GRANTS_PER_IP_PER_DAY ??= '0';
    process.env.AWS_REGION ??= 'us-east-1';
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const prefix = opts.tablePrefix ?? 'modelmux';
    process.env.KEYS_TABLE = `${prefix}-keys`;
    process.env.ACCOUNTS_TABLE = `${prefix}-accounts`;
    process.env.LEDGER_TABLE = `${prefix}-ledger`;
    process.env.RESPONSES_TABLE = `${prefix}-responses`;
    reloadConfig(); // read the endpoint and table names just set

    const { documentClient } = await import('../functions/shared/store/dynamo');
    await ensureTables(documentClient(), {
      keys: process.env.KEYS_TABLE,
      accounts: process.env.ACCOUNTS_TABLE,
      ledger: process.env.LEDGER_TABLE,
      responses: process.env.RESPONSES_TABLE,
    });

    const { providers, simulator } = await startSimulatedProviders(opts.simulator, closers);

    const settle = await startSettleRunner(opts.settle);
    closers.push(settle.close);

    const dev = await ensureDevKey(opts.devKeyFile, opts.devFreeTokens, opts.devCreditNanoUsd ?? 0);
    if (opts.stateFile !== undefined) {
      mkdirSync(dirname(opts.stateFile), { recursive: true });
      const state = {
        dynamodbEndpoint: endpoint,
        tables: {
          keys: process.env.KEYS_TABLE,
          accounts: process.env.ACCOUNTS_TABLE,
          ledger: process.env.LEDGER_TABLE,
          responses: process.env.RESPONSES_TABLE,
        },
        devAccountId: dev.accountId,
        pid: process.pid,
      };
      writeFileSync(opts.stateFile, `${JSON.stringify(state, null, 2)}\n`);
    }

    // One process serves every request here: load the tokenizer now (~0.5 s), not in the middle of a
    // later request's stream (in Lambda it loads after a container's first answer, billing/request-bill.ts).
    const { warmTokenizer } = await import('../functions/shared/usage/estimate');
    await warmTokenizer();

    const cognito = await startLocalCognito(opts.cognito, closers);
    ensureByokKek(opts.byokKekFile, closers);
    const stripe = await startLocalStripe(opts.stripe, closers);
    const mail = await startLocalMail(opts.mail, closers);
    reloadConfig(); // the settings above (tables, queue, Cognito, BYOK, Stripe, email) are read by the handlers' INIT
    const listening = await serveFunctions(opts, cognito);
    closers.push(listening.close);
    if (stripe?.standIn) stripe.standIn.webhooks.url = `${listening.url.replace(/\/$/, '')}${STRIPE_WEBHOOK_PATH}`;

    return {
      baseUrl: `${listening.url.replace(/\/$/, '')}/v1`,
      apiKey: dev.key,
      accountId: dev.accountId,
      dynamodbEndpoint: endpoint,
      simulator,
      settle,
      providers,
      origin: listening.url.replace(/\/$/, ''),
      cognito,
      stripe,
      mail,
      close: () => closeAll(closers),
    };
  } catch (err) {
    await closeAll(closers);
    throw err;
  }
}

type Closers = Array<() => Promise<void>>;

/**
 * Points each provider of {@link SIMULATED_BASE} at the simulator (started on first need; the adapter
 * appends its paths to `sim.urls[name]`) unless its `<NAME>_API_KEY` is set, in which
 * case the real provider is used.
 * @returns provider variable prefix (`OPENAI` for `OPENAI_API_KEY`) → 'real' | 'simulated', and the
 * simulator when one started.
 */
async function startSimulatedProviders(
  options: GatewayOptions['simulator'],
  closers: Closers,
): Promise<{ providers: Record<string, 'real' | 'simulated'>; simulator: Simulator | undefined }> {
  const providers: Record<string, 'real' | 'simulated'> = {};
  let simulator: Simulator | undefined;
  for (const [name, provider] of Object.entries(SIMULATED_BASE)) {
    if (process.env[`${name}_API_KEY`]) {
      providers[name] = 'real';
      continue;
    }
    simulator ??= await startSimulator(options);
    process.env[`${name}_API_KEY`] = 'sim-key';
    process.env[`${name}_BASE_URL`] = simulator.urls[provider];
    providers[name] = 'simulated';
  }
  if (simulator) closers.push(() => (simulator as Simulator).close());
  return { providers, simulator };
}

/** Starts the Cognito emulator when asked and exports its pool's env (`COGNITO_*`) for the account function. */
async function startLocalCognito(options: GatewayOptions['cognito'], closers: Closers): Promise<RunningCognitoLocal | undefined> {
  if (options === undefined) return undefined;
  const own = options.dataDir === undefined ? mkdtempSync(join(tmpdir(), 'modelmux-cognito-')) : undefined;
  if (own !== undefined) closers.push(async () => rmSync(own, { recursive: true, force: true }));
  const running = await startCognitoLocal({
    dataDir: options.dataDir ?? (own as string),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.onCode === undefined ? {} : { onCode: options.onCode }),
  });
  closers.push(running.stop);
  Object.assign(process.env, running.env);
  return running;
}

/** Without KMS, BYOK encrypts with a local key-encryption key file: the given one, or a new one in a temporary directory. */
function ensureByokKek(byokKekFile: string | undefined, closers: Closers): void {
  if (!process.env.BYOK_KMS_KEY_ID && !process.env.BYOK_LOCAL_KEK_FILE) {
    let kek = byokKekFile;
    if (kek === undefined) {
      const dir = mkdtempSync(join(tmpdir(), 'modelmux-kek-'));
      closers.push(async () => rmSync(dir, { recursive: true, force: true }));
      kek = join(dir, 'byok-kek');
    }
    process.env.BYOK_LOCAL_KEK_FILE = kek;
  }
}

/** Imports the handlers (after the env is set: they read it at load) and serves them as Function URLs on loopback. */
async function serveFunctions(opts: GatewayOptions, cognito: RunningCognitoLocal | undefined): Promise<Awaited<ReturnType<typeof listen>>> {
  installAwslambdaGlobals();
  const chat = await import('../functions/chat-completions/handler');
  const emb = await import('../functions/embeddings/handler');
  const account = await import('../functions/account/handler');
  const { ACCOUNT_PATH_PATTERNS } = await import('../functions/shared/account-api/paths');
  const { GEMINI_EMBED_PATH } = await import('../functions/shared/gemini-api/embed');
  const server = createFunctionUrlServer(
    [
      {
        // As CloudFront routes (lib/constructs/api-distribution.ts): OpenAI's and the Gemini API's embeddings, images.
        match: (p) => p.startsWith('/v1/embeddings') || p.startsWith('/v1/images/') || GEMINI_EMBED_PATH.test(p),
        handler: emb.handler,
        invokeMode: 'BUFFERED',
        functionName: 'modelmux-embeddings',
        timeoutMs: 60_000,
      },
      {
        match: (p) => isAccountPath(ACCOUNT_PATH_PATTERNS, p),
        handler: account.handler,
        invokeMode: 'BUFFERED',
        functionName: 'modelmux-account',
        timeoutMs: 30_000,
      },
      { match: () => true, handler: chat.handler, invokeMode: 'RESPONSE_STREAM', functionName: 'modelmux-chat', timeoutMs: opts.chatTimeoutMs ?? 300_000 },
    ],
    {
      signalClientDisconnect: opts.signalClientDisconnect === true,
      ...(opts.onInvocation === undefined ? {} : { onInvocation: opts.onInvocation }),
      ...(opts.siteDir === false
        ? {}
        : { intercept: createStaticSite({ root: opts.siteDir ?? WEB_DIST_DIR, cognitoEndpoint: cognito?.endpoint ?? localCognitoEndpoint() }) }),
    },
  );
  const listening = await listen(server, opts.port ?? 0, '127.0.0.1');
  return listening;
}

/** The Cognito endpoint the dashboard calls, for its CSP: AWS's own for the region until a local one is set. */
function localCognitoEndpoint(): string {
  return process.env.COGNITO_ENDPOINT ?? `https://cognito-idp.${process.env.AWS_REGION ?? 'us-east-1'}.amazonaws.com/`;
}

async function closeAll(closers: Array<() => Promise<void>>): Promise<void> {
  for (const close of closers.reverse()) await close().catch(() => undefined);
}

/**
 * The dev account and key. With a key file, the same key is reused across restarts as long as it
 * still authenticates (only its hash is in DynamoDB, so the plaintext lives in that git-ignored file).
 * `creditNanoUsd` > 0 makes it a paid account: given at creation, or added once to a reused account
 * that never had credit.
 */
async function ensureDevKey(file: string | undefined, freeTokens: number | undefined, creditNanoUsd: number): Promise<{ key: string; accountId: string }> {
  const { authenticate } = await import('../functions/shared/accounts/authenticate');
  const { addCredit, createAccount, getAccount } = await import('../functions/shared/accounts/account-store');
  const { createKey } = await import('../functions/shared/accounts/keys/api-key-store');
  if (file !== undefined && existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    const who = await authenticate(key).catch(() => undefined);
    if (who) {
      const account = await getAccount(who.accountId, { consistent: true });
      if (creditNanoUsd > 0 && account !== undefined && account.purchasedNanoUsd === 0) await addCredit(who.accountId, creditNanoUsd);
      return { key, accountId: who.accountId };
    }
  }
  const account = await createAccount({ ...(freeTokens === undefined ? {} : { freeTokens }), creditNanoUsd });
  const created = await createKey(account.accountId, 'dev');
  if (file !== undefined) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, created.key + '\n', { mode: 0o600 });
  }
  return { key: created.key, accountId: account.accountId };
}

/** The default place for local state (git-ignored). */
export const LOCAL_STATE_DIR = join(process.cwd(), '.local');
