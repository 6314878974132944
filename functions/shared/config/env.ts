/**
 * The one config module: every environment variable the functions read, as one zod schema over
 * `process.env`, parsed once per container. The handlers call {@link config} at module load (INIT), so a
 * malformed value fails the cold start with a {@link ConfigError} naming the variable, instead of a
 * request failing later (or a typo silently falling back to a default).
 *
 * Conventions: an unset, empty or blank value means "not set" (its default applies); durations are
 * integers of milliseconds, counts non-negative integers. The README's Configuration table lists the
 * same names (test/config/env.test.ts keeps them in step).
 *
 * Not here, on purpose:
 * - the upstream keys and base URLs (`<PROVIDER>_API_KEY`, `<PROVIDER>_BASE_URL`), read by
 *   config/upstream-credentials.ts with the Secrets Manager secret (credentials, not settings: they
 *   may change under a test, and are never kept in a frozen object that could be logged);
 * - `MODELMUX_TOKENIZER_MODULE`, `MODELMUX_TRACER_MODULE`, `MODELMUX_SQS_MODULE`, `MODELMUX_KMS_MODULE`,
 *   which the bundler replaces at build time
 *   (lib/constructs/gateway-function.ts `define`): they must stay literal `process.env.X` reads;
 * - the variables the AWS SDK and Powertools read themselves (`AWS_REGION`, credentials,
 *   `POWERTOOLS_LOG_LEVEL`, `POWERTOOLS_METRICS_DISABLED`, `AWS_ENDPOINT_URL_*`), and the facts the Lambda
 *   runtime sets (`AWS_LAMBDA_FUNCTION_NAME`: on Lambda or not; `AWS_LAMBDA_FUNCTION_VERSION`), read where
 *   the SDK's convention reads them (aws/aws-json.ts, store/dynamo.ts, billing/settle-queue.ts,
 *   billing/lease.ts, observability/metrics.ts).
 *
 * To add a setting: one field below (schema, `expected` text, doc comment with unit, default and
 * meaning), one row in the README's Configuration table, and read it as `config().NAME`.
 */
import * as z from '../validation/zod';

/**
 * Thrown when an environment variable holds a value the functions cannot use. The message names the
 * variable, what was expected and the value received (settings only: no secrets are in the schema).
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    expected: string,
    got: string,
  ) {
    super(`${variable} must be ${expected}, got '${got}'.`);
    this.name = 'ConfigError';
  }
}

/** Unset, empty or blank → undefined (the default applies); otherwise the trimmed string. */
const blankToUndefined = (v: unknown) => (typeof v === 'string' ? (v.trim() === '' ? undefined : v.trim()) : v);
/** `schema`, or undefined when the value is unset or blank (classic zod's `z.preprocess(blankToUndefined, schema.optional())`). */
const optionalSetting = <T extends z.ZodMiniType>(schema: T) => z.preprocess(blankToUndefined, z.optional(schema));
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().check(z.int(), z.gte(min), z.lte(max));
const withDefault = <T extends z.ZodMiniType>(schema: T, fallback: z.output<T>) =>
  z.pipe(
    optionalSetting(schema),
    z.transform((v) => (v === undefined ? fallback : v) as z.output<T>),
  );
const optionalString = optionalSetting(z.string());
const optionalUrl = optionalSetting(z.url());

/** A JSON string parsed (left as it is when it is not JSON, so the schema after it refuses it). */
const parseJson = (v: unknown): unknown => {
  try {
    return typeof v === 'string' ? JSON.parse(v) : v;
  } catch {
    return v;
  }
};
const positiveMs = z.number().check(z.int(), z.positive());
const partialTimeouts = z.partial(z.strictObject({ connectMs: positiveMs, headersMs: positiveMs, firstTokenMs: positiveMs, idleMs: positiveMs }));
const timeoutOverrides = z.strictObject({ stream: z.optional(partialTimeouts), buffered: z.optional(partialTimeouts) });

const MS = 'a non-negative integer of milliseconds';
const COUNT = 'a non-negative integer';

/** Each variable: its schema (with its default) and the `expected` text of its ConfigError. */
const FIELDS = {
  // --- DynamoDB (store/) ---
  /** Physical table names (set by the stack; `modelmux-*` for DynamoDB Local). */
  KEYS_TABLE: { schema: withDefault(z.string(), 'modelmux-keys'), expected: 'a table name' },
  ACCOUNTS_TABLE: { schema: withDefault(z.string(), 'modelmux-accounts'), expected: 'a table name' },
  LEDGER_TABLE: { schema: withDefault(z.string(), 'modelmux-ledger'), expected: 'a table name' },
  RESPONSES_TABLE: { schema: withDefault(z.string(), 'modelmux-responses'), expected: 'a table name' },
  /** DynamoDB endpoint URL, only for DynamoDB Local (unset = AWS's). */
  DYNAMODB_ENDPOINT: { schema: optionalUrl, expected: 'a URL' },
  /**
   * DynamoDB request timeout of the container's client, ms; default 3,000 (`npm start` and the tests set
   * 10,000). Raised above the default, the connect timeout follows it up to 5 s (store/dynamo.ts).
   */
  DYNAMODB_REQUEST_TIMEOUT_MS: { schema: withDefault(int(1), 3_000), expected: 'a positive integer of milliseconds' },

  // --- durable settle (billing/settle-queue.ts) ---
  /** The settle queue's URL (set by the stack / `npm start`); unset = no queue. */
  SETTLE_QUEUE_URL: { schema: optionalString, expected: 'a queue URL' },
  /** The settle dead-letter queue's URL (set by the stack; the sweep reads its depth); unset = not read. */
  SETTLE_DEAD_LETTER_QUEUE_URL: { schema: optionalString, expected: 'a queue URL' },
  /** SQS endpoint URL, only for the local emulator. */
  SQS_ENDPOINT: { schema: optionalUrl, expected: 'a URL' },
  /** SQS request timeout of the settle queue's client, ms; default 1,000 (`npm start` sets 10,000). */
  SQS_REQUEST_TIMEOUT_MS: { schema: withDefault(int(1), 1_000), expected: 'a positive integer of milliseconds' },

  // --- rate limits (rateLimitsFor below) and holds (billing/hold.ts, billing/sweep.ts) ---
  /** Paid accounts: requests per minute per account and per key; 0 = off. Default 600. */
  RATE_LIMIT_RPM: { schema: withDefault(int(0), 600), expected: COUNT },
  /** Paid accounts: requests in flight per account and per key; 0 = off. Default 50. */
  RATE_LIMIT_CONCURRENT: { schema: withDefault(int(0), 50), expected: COUNT },
  /** Free tier (nothing ever purchased): requests per minute; 0 = off. Default 20 (OpenRouter's). */
  RATE_LIMIT_FREE_RPM: { schema: withDefault(int(0), 20), expected: COUNT },
  /** Free tier: requests in flight; 0 = off. Default 5. */
  RATE_LIMIT_FREE_CONCURRENT: { schema: withDefault(int(0), 5), expected: COUNT },
  /** How long past its expiry an unsettled hold waits before the sweep settles it as orphaned, ms. Default 120,000. */
  HOLD_SWEEP_GRACE_MS: { schema: withDefault(int(0), 120_000), expected: COUNT },
  /** How long a container's view of an account may start the upstream call beside the hold, ms. Default 5,000. */
  ACCOUNT_CACHE_TTL_MS: { schema: withDefault(int(0), 5_000), expected: COUNT },
  /**
   * Credit leases (billing/lease.ts, docs/credit-leases.md): how long a container may admit an
   * account's requests against a leased slice of its credit and rate limits (RFC 4006 Validity-Time),
   * ms; default 30,000 (what a refund or a key's new limit may lag); 0 = off, every request holds on
   * the account item before its answer.
   */
  CREDIT_LEASE_VALIDITY_MS: { schema: withDefault(int(0), 30_000), expected: MS },
  /** Share of what an account (or a key's spend limit) has available that one lease takes, percent. Default 10. */
  CREDIT_LEASE_SHARE_PERCENT: { schema: withDefault(int(1, 100), 10), expected: 'an integer from 1 to 100' },
  /**
   * How long a lease may sit unused before the container returns it (3GPP Quota-Holding-Time), ms.
   * Default 5,000: a client's next request usually comes sooner, and an idle lease's credit, request
   * units and slots are not kept from the account's other containers much longer.
   */
  CREDIT_LEASE_IDLE_MS: { schema: withDefault(int(0), 5_000), expected: MS },

  // --- caches ---
  /** How long a warm container trusts a key lookup, ms. Default 30,000. */
  KEY_CACHE_TTL_MS: { schema: withDefault(int(0), 30_000), expected: MS },
  /** How long a container uses an account's attached (BYOK) keys before reading them again, ms; 0 disables. Default 5,000. */
  BYOK_CACHE_TTL_MS: { schema: withDefault(int(0), 5_000), expected: MS },

  // --- time limits (routing/, app/) ---
  /**
   * How long a buffered chat request may keep its HTTP status open, counted from its arrival, ms.
   * Default 55,000. Until then a failure is answered with its own status; an answer still being
   * produced then gets its 200 committed and JSON-whitespace beats until it is written
   * (app/chat-answer.ts `heldJson`), while routing goes on to the function's deadline. A buffered answer sends no
   * byte until it is whole, and CloudFront answers its own 504 to an origin silent for its read
   * timeout (60 s by default; CloudFront Developer Guide, "Response timeout"), while the gateway would
   * go on and bill the answer to nobody: the budget stays under that timeout, and the stack sets it
   * from the distribution's read timeout (lib/modelmux-stack.ts).
   */
  BUFFERED_CHAT_BUDGET_MS: { schema: withDefault(int(1), 55_000), expected: 'a positive integer of milliseconds' },
  /** How long a stream may wait for its first token before its 200 is committed, ms. Default 10,000. */
  STREAM_COMMIT_AFTER_MS: { schema: withDefault(int(0), 10_000), expected: MS },
  /**
   * JSON overriding the attempt time limits, ms, e.g. `{"stream":{"idleMs":20000}}`: `stream` fields
   * (`connectMs`, `headersMs`, `firstTokenMs`, `idleMs`) replace routing/timeouts.ts's latency table for
   * every chat model, `buffered` fields the embeddings defaults. Unset = `{}` (the built-in limits).
   */
  UPSTREAM_TIMEOUTS_MS: {
    schema: withDefault(z.preprocess(parseJson, timeoutOverrides), {}),
    expected: 'JSON like {"stream":{"idleMs":20000}} (stream/buffered: connectMs, headersMs, firstTokenMs, idleMs; positive integer ms)',
  },

  // --- stored responses ---
  /**
   * Days a stored Responses API response is kept; 0 stores none (`store: true` then behaves as
   * `store: false`). Default 30, OpenAI's retention of responses created with `store: true` (OpenAI API
   * reference, "Create a model response", `store`). Each stored item carries the DynamoDB TTL attribute
   * `expiresAt` = creation + this; readers treat it as gone from then on.
   */
  RESPONSE_RETENTION_DAYS: {
    schema: withDefault(int(0, 365), 30),
    expected: 'an integer from 0 to 365 (days; 0 = store no responses)',
  },

  // --- sign-up (accounts/self-serve-account.ts) ---
  /**
   * Free grants per client network per UTC day: the 200,000 free tokens go to at most this many new
   * self-serve accounts a day from one IPv4 address or one IPv6 /64 (accounts/signup-network.ts); later
   * sign-ups from it that day get an account without them (`free_grant_withheld: 'ip_limit'`).
   * 0 = off. Default 3. `npm start` and the local gateway set 0 unless it is set (every local sign-up
   * comes from 127.0.0.1).
   */
  SIGNUP_GRANTS_PER_IP_PER_DAY: { schema: withDefault(int(0), 3), expected: COUNT },

  // --- secrets, identity, BYOK, URLs ---
  /** ARN of the Secrets Manager secret holding the upstream keys (set by the stack). */
  UPSTREAM_SECRET_ARN: { schema: optionalString, expected: 'a secret ARN' },
  /** ARN of the CloudFront origin secret; unset = no origin check. */
  ORIGIN_SECRET_ARN: { schema: optionalString, expected: 'a secret ARN' },
  /** KMS key of BYOK envelope encryption (set by the stack). */
  BYOK_KMS_KEY_ID: { schema: optionalString, expected: 'a KMS key id or ARN' },
  /** Local key-encryption-key file, when there is no KMS key (`npm start`). */
  BYOK_LOCAL_KEK_FILE: { schema: optionalString, expected: 'a file path' },
  /** Public base URL of the deployment (http/public-url.ts); unset = derived from the request. */
  PUBLIC_BASE_URL: { schema: optionalSetting(z.url({ protocol: /^https?$/ })), expected: 'an http(s) URL' },
  /** Cognito user pool and its dashboard app client (identity/identity-config.ts derives the rest); unset = the account API answers 503. */
  COGNITO_USER_POOL_ID: { schema: optionalSetting(z.string().check(z.regex(/^[a-z0-9-]+_[0-9A-Za-z]+$/))), expected: 'a user pool id (<region>_<id>)' },
  COGNITO_CLIENT_ID: { schema: optionalString, expected: 'an app client id' },
  COGNITO_ISSUER: { schema: optionalUrl, expected: 'a URL' },
  COGNITO_JWKS_URI: { schema: optionalUrl, expected: 'a URL' },
  COGNITO_ENDPOINT: { schema: optionalUrl, expected: 'a URL' },

  // --- payments (payments/) ---
  /**
   * ARN (or name) of the Secrets Manager secret `<stack>/stripe`: a JSON object with
   * `STRIPE_SECRET_KEY` and `STRIPE_WEBHOOK_SECRET` (set by the stack). Unset = those two from env
   * (`npm start`); neither set = payments disabled.
   */
  STRIPE_SECRET_ARN: { schema: optionalString, expected: 'a secret ARN' },
  /** Base URL of the Stripe API, only for the local stand-in (`npm start`: `http://127.0.0.1:<port>`); unset = api.stripe.com. */
  STRIPE_API_BASE: { schema: optionalSetting(z.url({ protocol: /^https?$/ })), expected: 'an http(s) URL' },

  // --- email (notify/) ---
  /**
   * Sender of the account emails (low balance, key spend limit reached, auto top-up failed), sent with
   * Amazon SES (SESv2 SendEmail): an address of a verified SES identity, e.g. `modelmux <billing@example.com>`.
   * Unset = no email is sent (logged once); nothing else changes.
   */
  EMAIL_FROM: { schema: optionalString, expected: 'an email address' },

  // --- observability ---
  /** `service` in log lines and metrics (the stack sets the stack name). Default `modelmux`. */
  POWERTOOLS_SERVICE_NAME: { schema: withDefault(z.string(), 'modelmux'), expected: 'a service name' },
  /** `true` loads the X-Ray tracer at INIT. */
  POWERTOOLS_TRACE_ENABLED: {
    schema: z.pipe(
      optionalSetting(z.enum(['true', 'false'])),
      z.transform((v) => v === 'true'),
    ),
    expected: "'true' or 'false'",
  },
} satisfies Record<string, { schema: z.ZodMiniType; expected: string }>;

type Fields = typeof FIELDS;

/** The parsed settings, keyed by variable name. */
export type Config = Readonly<{ [K in keyof Fields]: z.output<Fields[K]['schema']> }>;

/** Every variable the schema reads (the README's Configuration table names the same). */
export const CONFIG_VARIABLES = Object.keys(FIELDS) as ReadonlyArray<keyof Fields>;

const schema = z.object(Object.fromEntries(Object.entries(FIELDS).map(([k, f]) => [k, f.schema])) as { [K in keyof Fields]: Fields[K]['schema'] });

/**
 * Parses `env` (default `process.env`) into the frozen settings; no caching.
 * @throws ConfigError naming the first variable whose value is unusable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const name = String(parsed.error.issues[0]?.path[0] ?? '') as keyof Fields;
    throw new ConfigError(name, FIELDS[name]?.expected ?? 'valid', String(env[name] ?? ''));
  }
  return Object.freeze(parsed.data) as Config;
}

/**
 * One setting, read now from `env` (default `process.env`) by its own schema, its default applied,
 * without parsing or keeping the others: for the one value needed at module load, before a handler's
 * INIT parses the rest (the logger's service name, observability/logger.ts).
 * @throws ConfigError naming the variable when its value is unusable.
 */
export function setting<K extends keyof Fields>(name: K, env: NodeJS.ProcessEnv = process.env): Config[K] {
  const parsed = z.safeParse(FIELDS[name].schema as z.ZodMiniType, env[name]);
  if (!parsed.success) throw new ConfigError(name, FIELDS[name].expected, String(env[name] ?? ''));
  return parsed.data as Config[K];
}

let current: Config | undefined;

/**
 * This container's settings, parsed on the first call (the handlers call it at INIT) and kept.
 * @throws ConfigError naming the variable when one is unusable.
 */
export function config(): Config {
  return (current ??= loadConfig());
}

/**
 * Forgets the parsed settings: the next {@link config} re-reads `process.env`. For `npm start`, the
 * admin CLI and the test helpers after they set table names or endpoints, and tests that set
 * variables per test. Never called in a deployed function (its environment does not change).
 */
export function reloadConfig(): void {
  current = undefined;
}

/**
 * The rate limits of one tier, per account AND per key, enforced inside the hold's conditional write
 * (billing/hold.ts): requests per minute (a fixed window, the epoch minute) and requests in flight
 * (released by settle). 0 = off (the account API and `GET /v1/key` show it as null).
 */
export interface RateLimits {
  /** Requests per minute. */
  rpm: number;
  /** Requests in flight at once. */
  concurrent: number;
}

/**
 * The limits in force for an account, read from the config at call time: the free tier's
 * `RATE_LIMIT_FREE_*` (default 20 a minute, OpenRouter's limit for free usage, docs/peers.md; 5 at once)
 * while the account never bought credit (`purchasedNanoUsd` 0), else `RATE_LIMIT_RPM` /
 * `RATE_LIMIT_CONCURRENT` (default 600 a minute and 50 at once: one tenant takes a small share of the
 * account's 1,000 concurrent Lambda executions).
 * @throws ConfigError naming the variable when one is unusable.
 */
export function rateLimitsFor(purchasedNanoUsd: number, c: Config = config()): RateLimits {
  return purchasedNanoUsd > 0
    ? { rpm: c.RATE_LIMIT_RPM, concurrent: c.RATE_LIMIT_CONCURRENT }
    : { rpm: c.RATE_LIMIT_FREE_RPM, concurrent: c.RATE_LIMIT_FREE_CONCURRENT };
}
