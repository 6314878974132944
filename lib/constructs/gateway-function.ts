import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Alias,
  ApplicationLogLevel,
  Architecture,
  FunctionUrl,
  FunctionUrlAuthType,
  HttpMethod,
  type ILayerVersion,
  InvokeMode,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** Repository root, for entry paths and the lock file (this file is `<root>/lib/constructs/…`). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The Lambda runtime of every gateway function: Node.js 24 (GA on Lambda since 2025-11-25, deprecation
 * 2028-04-30; Lambda docs, lambda-nodejs). Node 24 dropped callback-style handlers, which we do not use
 * (streaming goes through `awslambda.streamifyResponse`, buffered handlers are async).
 */
export const GATEWAY_RUNTIME = Runtime.NODEJS_24_X;

/**
 * esbuild target: node22, the oldest runtime we support. Everything node22 parses runs on node24, so one
 * bundle is valid on both, and `runtime` can be moved back to NODEJS_22_X without touching bundling.
 */
export const GATEWAY_ESBUILD_TARGET = 'node22';

/**
 * Banner for the ESM bundle. Some bundled dependencies are CommonJS and `require()` Node built-ins; in an
 * ES module `require` does not exist, and esbuild's shim then throws "Dynamic require of … is not
 * supported". A module-scoped `require` made by `createRequire` fixes that (esbuild docs, #1921). The
 * alias avoids clashing with a dependency that itself imports `createRequire`.
 */
const ESM_REQUIRE_BANNER = "import { createRequire as __modelmuxCreateRequire } from 'node:module'; const require = __modelmuxCreateRequire(import.meta.url);";

/**
 * The token counter used for estimates (functions/shared/usage/estimate.ts) is a 2.4 MB rank table.
 * It is built into its own file beside the handler and loaded with `import()` only when an estimate
 * is needed, so no cold start pays for it. The handler learns the file's name through `define`.
 */
export const TOKENIZER_FILE = 'tokenizer-o200k.mjs';
const TOKENIZER_SOURCE = 'node_modules/gpt-tokenizer/esm/encoding/o200k_base.js';

/**
 * Powertools Tracer with the X-Ray SDK (~0.5 MB minified) is built into its own file beside the handler,
 * only for a stack with tracing on, and loaded with `import()` at INIT only when `POWERTOOLS_TRACE_ENABLED`
 * is `true` (functions/shared/observability/tracer.ts): without tracing, no cold start reads or parses it.
 */
export const TRACER_FILE = 'tracer.mjs';
const TRACER_SOURCE = 'node_modules/@aws-lambda-powertools/tracer/lib/esm/index.js';

/**
 * AWS clients that only rare paths use, each built into its own file beside the handler and loaded
 * with `import()` on first use (functions/shared/billing/settle-queue.ts: SQS, only when a settle must
 * go through the durable queue; functions/shared/accounts/byok/key-encryption.ts: KMS, only for BYOK).
 * Out of `index.mjs`, no cold start parses them (~55 KB of the chat bundle). Each file carries its own
 * copy of the SDK core it needs; the env-only credential chain is aliased as in the handler.
 */
export const LAZY_CLIENT_FILES = [
  { file: 'aws-sqs.mjs', source: 'node_modules/@aws-sdk/client-sqs/dist-es/index.js', define: 'process.env.MODELMUX_SQS_MODULE' },
  { file: 'aws-kms.mjs', source: 'node_modules/@aws-sdk/client-kms/dist-es/index.js', define: 'process.env.MODELMUX_KMS_MODULE' },
] as const;

/** Days a gateway function's logs are kept unless the stack says otherwise. */
export const DEFAULT_LOG_RETENTION_DAYS = 30;

/** Replaces `@aws-sdk/credential-provider-node` in the bundles: an env-only default credential chain. */
const LAMBDA_CREDENTIALS_SOURCE = 'functions/shared/store/lambda-credentials.ts';

/**
 * Replaces `@smithy/core/event-streams` in the handler bundles: none of their clients has an event-stream
 * operation, and the SDK's `import()` of that module made esbuild wrap ~160 SDK modules in lazy
 * initializers (~19 KB; see no-event-streams.ts).
 */
const NO_EVENT_STREAMS_SOURCE = 'functions/shared/store/no-event-streams.ts';

/** Headers the official OpenAI SDKs send (providers.md §1.6), allowed for browser-based callers. */
const SDK_HEADERS = [
  'authorization',
  'content-type',
  'openai-organization',
  'openai-project',
  'x-stainless-arch',
  'x-stainless-helper-method',
  'x-stainless-lang',
  'x-stainless-os',
  'x-stainless-package-version',
  'x-stainless-retry-count',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-timeout',
];

/** Props of {@link GatewayFunction}. */
export interface GatewayFunctionProps {
  /** Handler file, relative to the repository root (e.g. `functions/chat-completions/handler.ts`); exports `handler`. */
  readonly entry: string;
  /** Shown in the Lambda console. */
  readonly description: string;
  /** Invocation timeout in seconds (Lambda maximum 900; Lambda docs, gettingstarted-limits). */
  readonly timeoutSeconds: number;
  /**
   * Memory in MB. Default 1024: Lambda allocates CPU in proportion to memory (1,769 MB = one vCPU; Lambda
   * docs, configuration-memory), and our work per request (JSON parse/serialise, SSE re-framing, zod
   * validation, SHA-256 of the key) is CPU-bound, not memory-bound. Less memory means a slower first token.
   */
  readonly memorySize?: number;
  /**
   * Reserved concurrency (a cap, also a reservation out of the account's 1,000 default). Default none:
   * scale to zero and pay per use. Set it to bound spend or protect other functions in the account.
   */
  readonly reservedConcurrentExecutions?: number;
  /** Environment variables beyond the house defaults (table names, secret ARN, base URLs). No secrets. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Days its logs are kept, one of CloudWatch's retention periods. Default {@link DEFAULT_LOG_RETENTION_DAYS}. */
  readonly logRetentionDays?: number;
  /**
   * Keep the log group when the stack is deleted. Default true: a gateway function's log holds the
   * settle lines (tokens, cost, and any entry logged for replay), which billing disputes need after
   * the stack is gone; the retention period still expires them.
   */
  readonly retainLogs?: boolean;
  /** X-Ray active tracing, with Powertools Tracer in the code (default false). */
  readonly tracing?: boolean;
  /**
   * Publish a version per code or configuration change and point the `live` alias at it (default
   * false): the Function URL then serves the alias, and CodeDeploy shifts it (lib/constructs/rollout.ts).
   */
  readonly liveAlias?: boolean;
  /** Layers (e.g. lib/constructs/shutdown-extension.ts's external extension). Default none. */
  readonly layers?: readonly ILayerVersion[];
}

/** The alias the Function URLs of the request functions serve (CodeDeploy moves it between versions). */
export const LIVE_ALIAS = 'live';

const APPLICATION_LOG_LEVEL = 'INFO' satisfies keyof typeof ApplicationLogLevel; // Powertools' level and Lambda's application filter
/**
 * A gateway Lambda function with the house defaults: Node.js 24 on ARM64 (Graviton: about 20% cheaper
 * per GB-second than x86; Lambda pricing page), 1024 MB, its own log group (one month unless set;
 * retained after stack deletion), Powertools env, optional X-Ray tracing,
 * and a bundle built by LOCAL esbuild (no Docker) that contains everything it runs, the AWS SDK
 * included, so the deployed code is exactly the code we test.
 *
 * Bundle: ESM (`index.mjs`) rather than CJS, because the sources are ES modules and ESM allows top-level
 * `await` during INIT (the handler can await the upstream secret before the first request); `module`
 * main-field first so the AWS SDK's ES build is tree-shaken. Minified without `keepNames`: it
 * would add a `__name()` call per function and class (~36 KB, ~12 ms of INIT); the error family names
 * each class explicitly, and stack traces are read through the source map. One cost: the SDK tells its
 * default `NoOpLogger` apart by class name, so its HTTP handler's rare "socket usage at capacity"
 * warning is dropped instead of going to the console. The source
 * map (without `sourcesContent`) is shipped beside the bundle for offline symbolication, but NOT
 * enabled at runtime: `--enable-source-maps` makes Node read and parse the ~0.9 MB map at every cold
 * start (`npm run bench` times the bundle both ways: "with source maps" row). `metafile`
 * writes `index.meta.json` beside the bundle for the bench's bundle-composition report.
 */
export class GatewayFunction extends Construct {
  /** The Lambda function. */
  readonly function: NodejsFunction;
  /** Its log group. */
  readonly logGroup: LogGroup;
  /** Its execution role: log writes to its own log group only, plus what each endpoint grants. */
  readonly role: Role;
  /** The `live` alias, when {@link GatewayFunctionProps.liveAlias}. */
  readonly alias: Alias | undefined;

  constructor(scope: Construct, id: string, props: GatewayFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: (props.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS) as RetentionDays,
      removalPolicy: props.retainLogs === false ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    const tracing = props.tracing === true;
    // Its own role instead of AWSLambdaBasicExecutionRole (logs:CreateLogGroup/CreateLogStream/
    // PutLogEvents on every log group): the log group exists already, so it may only write to it.
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: `${props.description}: execution role` });
    this.logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: `${REPO_ROOT}${props.entry}`,
      handler: 'handler',
      description: props.description,
      runtime: GATEWAY_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: Duration.seconds(props.timeoutSeconds),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logGroup: this.logGroup,
      // No START/END/REPORT lines (no alarm reads log text); Powertools' own Console passes EMF as is.
      loggingFormat: LoggingFormat.JSON,
      systemLogLevelV2: SystemLogLevel.WARN,
      applicationLogLevelV2: ApplicationLogLevel[APPLICATION_LOG_LEVEL],
      role: this.role,
      tracing: tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      ...(props.layers !== undefined && props.layers.length > 0 ? { layers: [...props.layers] } : {}),
      projectRoot: REPO_ROOT,
      depsLockFilePath: `${REPO_ROOT}package-lock.json`,
      environment: {
        // The stack's name: log lines and metrics (the `service` dimension) of two stacks never mix.
        POWERTOOLS_SERVICE_NAME: Stack.of(this).stackName,
        POWERTOOLS_LOG_LEVEL: APPLICATION_LOG_LEVEL,
        ...(tracing ? { POWERTOOLS_TRACE_ENABLED: 'true' } : {}),
        ...props.environment,
      },
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: GATEWAY_ESBUILD_TARGET,
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        // Bundle the SDK too (CDK's default leaves @aws-sdk/* to the runtime's copy, whose version we
        // do not control and never tested). Only the lazily loaded tokenizer file stays outside.
        externalModules: [`./${TOKENIZER_FILE}`, `./${TRACER_FILE}`, ...LAZY_CLIENT_FILES.map((c) => `./${c.file}`)],
        // Credentials in Lambda come from the environment only: the rest of the SDK's default chain
        // (SSO, INI, IMDS, STS) is 140 KB of dead code at every cold start (see lambda-credentials.ts).
        // Event streams: unused by the bundled clients, and their lazy import costs INIT (see above).
        esbuildArgs: {
          '--alias': [`@aws-sdk/credential-provider-node=./${LAMBDA_CREDENTIALS_SOURCE}`, `@smithy/core/event-streams=./${NO_EVENT_STREAMS_SOURCE}`],
        },
        define: {
          'process.env.MODELMUX_TOKENIZER_MODULE': JSON.stringify(`./${TOKENIZER_FILE}`),
          'process.env.MODELMUX_TRACER_MODULE': JSON.stringify(`./${TRACER_FILE}`),
          ...Object.fromEntries(LAZY_CLIENT_FILES.map((c) => [c.define, JSON.stringify(`./${c.file}`)])),
        },
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => lazyBundleCommands(inputDir, outputDir, tracing),
        },
        minify: true,
        // No keepNames: its `__name()` call per function and class cost ~36 KB and ~12 ms of INIT
        // (`npm run bench`). Our errors name themselves (`override name`, errors/gateway-errors.ts).
        keepNames: false,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        sourcesContent: false,
        metafile: true,
      },
    });
    if (tracing) {
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray PutTraceSegments/PutTelemetryRecords (added by active tracing) support no resource-level permissions (X-Ray docs, "Identity-based policies"): Resource * is the only form.',
      });
    }
    this.alias = props.liveAlias === true ? new Alias(this, 'Live', { aliasName: LIVE_ALIAS, version: this.function.currentVersion }) : undefined;
  }

  /**
   * A public Function URL (`authType: NONE`) for this function (its `live` alias when it has one).
   *
   * Why not `AWS_IAM`: OpenAI SDKs send `Authorization: Bearer sk-mux-…`, not a SigV4 signature, so IAM
   * auth would reject every client. The gateway checks the API key itself (hash lookup in the keys
   * table) before doing anything billable. With NONE, aws-cdk-lib adds the resource-policy statements
   * for principal `*`: `lambda:InvokeFunctionUrl` (condition FunctionUrlAuthType NONE) and, since
   * Lambda's October 2025 change requiring both actions for new URLs (Lambda docs, urls-auth),
   * `lambda:InvokeFunction` (condition InvokedViaFunctionUrl), so the URL and nothing else is public.
   *
   * CORS: any origin, POST/GET, the headers the OpenAI SDKs send (authorization, content-type and
   * their `x-stainless-*` telemetry; `Authorization` is never covered by a `*` wildcard, so they are
   * listed). The spec says keys must not be
   * used in browser code, but CORS grants nothing beyond what the key already grants; it only lets a
   * browser-based tool (a playground, a notebook) read responses. Preflight is answered by Lambda
   * itself, without invoking the function.
   *
   * @param invokeMode RESPONSE_STREAM (up to 200 MB, first bytes sent as written) or BUFFERED (6 MB);
   *   Lambda docs, config-rs-invoke-furls.
   * @param methods the CORS methods (default POST, GET; the account API adds PUT, PATCH, DELETE).
   */
  addPublicUrl(invokeMode: InvokeMode, methods: readonly HttpMethod[] = [HttpMethod.POST, HttpMethod.GET]): FunctionUrl {
    // On the `live` alias when there is one: a deploy reaches clients only as CodeDeploy shifts it.
    return (this.alias ?? this.function).addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode,
      cors: {
        allowedOrigins: ['*'],
        allowedMethods: [...methods],
        allowedHeaders: SDK_HEADERS,
        maxAge: Duration.hours(1),
      },
    });
  }
}

/**
 * The shell commands that bundle the files the handler loads lazily, beside `index.mjs` (run by CDK's
 * `afterBundling` hook with local esbuild): the tokenizer, each lazily loaded SDK client, and the X-Ray
 * tracer when `tracing` is on.
 */
function lazyBundleCommands(inputDir: string, outputDir: string, tracing: boolean): string[] {
  return [
    `"${inputDir}/node_modules/.bin/esbuild" "${inputDir}/${TOKENIZER_SOURCE}" --bundle --format=esm --platform=node --target=${GATEWAY_ESBUILD_TARGET} --minify --log-level=warning --outfile="${outputDir}/${TOKENIZER_FILE}"`,
    ...LAZY_CLIENT_FILES.map(
      (c) =>
        `"${inputDir}/node_modules/.bin/esbuild" "${inputDir}/${c.source}" --bundle --format=esm --platform=node --target=${GATEWAY_ESBUILD_TARGET} --main-fields=module,main --minify --keep-names --log-level=warning "--alias:@aws-sdk/credential-provider-node=${inputDir}/${LAMBDA_CREDENTIALS_SOURCE}" "--banner:js=${ESM_REQUIRE_BANNER}" --outfile="${outputDir}/${c.file}"`,
    ),
    // The X-Ray SDK is CommonJS requiring Node built-ins: same createRequire banner as the handler.
    ...(tracing
      ? [
          `"${inputDir}/node_modules/.bin/esbuild" "${inputDir}/${TRACER_SOURCE}" --bundle --format=esm --platform=node --target=${GATEWAY_ESBUILD_TARGET} --main-fields=module,main --minify --keep-names --log-level=warning "--banner:js=${ESM_REQUIRE_BANNER}" --outfile="${outputDir}/${TRACER_FILE}"`,
        ]
      : []),
  ];
}
