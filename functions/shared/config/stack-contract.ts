/**
 * Names and numbers the CDK stack (lib/) and the functions share: env-var names, the origin header,
 * the settle reserve, the metric namespace and names. Plain constants with NO imports, so `cdk synth`
 * loads none of the Lambda code (no logger, no SDK clients, no ledger); test/lib/import-graph.test.ts
 * holds lib/ to that. Import them from here.
 */

/** Env var holding the origin secret's ARN; set by the stack only when CloudFront is in front. */
export const ORIGIN_SECRET_ARN_ENV = 'ORIGIN_SECRET_ARN';

/** The custom origin header CloudFront adds (lower case: Function URL events lower-case header names). */
export const ORIGIN_SECRET_HEADER = 'x-origin-verify';

/**
 * The header in which the distribution's viewer-request CloudFront Function (lib/constructs/api-distribution.ts)
 * hands the account function the viewer's IP address (CloudFront Functions event structure: `event.viewer.ip`),
 * overwriting any value the client sent. Lower case, as Function URL events name headers.
 */
export const VIEWER_ADDRESS_HEADER = 'x-viewer-address';

/** Env var holding the ARN (or name) of the Secrets Manager secret with the upstream keys. */
export const UPSTREAM_SECRET_ARN_ENV = 'UPSTREAM_SECRET_ARN';

/** Environment variable: the settle queue's URL. */
export const SETTLE_QUEUE_URL_ENV = 'SETTLE_QUEUE_URL';

/** Environment variable: the settle dead-letter queue's URL (the sweep reads its depth). */
export const SETTLE_DEAD_LETTER_QUEUE_URL_ENV = 'SETTLE_DEAD_LETTER_QUEUE_URL';

/**
 * How often the orphan sweep runs (minutes): the settle function's EventBridge schedule
 * (lib/constructs/settle-path.ts) and `npm start`'s timer (local/settle-runner.ts). Each run reads the
 * accounts table's sparse pendingHolds index (billing/hold-record.ts): read units by the accounts
 * with holds in flight, not by the table's size. An orphan is settled within its function's timeout +
 * HOLD_SWEEP_GRACE_MS + this interval.
 */
export const HOLD_SWEEP_INTERVAL_MINUTES = 5;

/**
 * The longest the settle of a request takes after its answer is out (ms): the in-process tries and
 * one SQS SendMessage (3 attempts of ≤ 1 s minus what is left), then the hold's best-effort `queued`
 * mark (≤ 500 ms, billing/hold-record.ts; cut short, the hold counts as unmarked). The function keeps this much (plus
 * the time to write the last bytes) back from its timeout (SETTLE_RESERVE_MS below; routing/timeouts.ts requestDeadline).
 */
export const SETTLE_TIMEOUT_MS = 4_000;

/**
 * Time kept back from the function's timeout for writing the answer and settling the ledger (ms): the
 * settle's own limit (SETTLE_TIMEOUT_MS: in-process tries, then the hand-off to the settle queue) plus
 * 1 s to write the last bytes, so a settle is always landed or queued before Lambda stops the invocation.
 */
export const SETTLE_RESERVE_MS = SETTLE_TIMEOUT_MS + 1_000;

/** The CloudWatch namespace of every modelmux metric (the stack's alarms and dashboard read it). */
export const METRICS_NAMESPACE = 'modelmux';

/** Metric names, as CloudWatch shows them. */
export const MetricName = {
  Requests: 'Requests',
  ClientErrors: 'ClientErrors',
  ServerErrors: 'ServerErrors',
  Errors: 'Errors',
  Fallbacks: 'Fallbacks',
  BreakerOpened: 'BreakerOpened',
  PromptTokens: 'PromptTokens',
  CompletionTokens: 'CompletionTokens',
  CostNanoUsd: 'CostNanoUsd',
  UsageEstimated: 'UsageEstimated',
  TimeToFirstToken: 'TimeToFirstToken',
  Overhead: 'Overhead',
  SettleFailures: 'SettleFailures',
  HoldsPending: 'HoldsPending',
  HoldsOverdue: 'HoldsOverdue',
  SettlesRetried: 'SettlesRetried',
  UpstreamOverHoldNanoUsd: 'UpstreamOverHoldNanoUsd',
  DirectAccessRefused: 'DirectAccessRefused',
  StripeWebhookSignatureFailures: 'StripeWebhookSignatureFailures',
  StripeWebhookFailures: 'StripeWebhookFailures',
} as const;

/**
 * The dimensions of the per-version copies of `Requests` and `ServerErrors` (with `service`): the
 * Lambda function's name and the version that answered (the runtime's `AWS_LAMBDA_FUNCTION_NAME` and
 * `AWS_LAMBDA_FUNCTION_VERSION`). A canary's rollback alarm reads the new version's own answers
 * (lib/constructs/monitoring.ts `addCanary`).
 */
export const VersionDimension = { function: 'function', version: 'version' } as const;

/** One of {@link MetricName}'s values. */
export type MetricNameValue = (typeof MetricName)[keyof typeof MetricName];
