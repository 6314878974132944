import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * modelmux's CloudWatch metrics, written as Embedded Metric Format (EMF) JSON lines on stdout with
 * Powertools Metrics: CloudWatch Logs turns them into metrics, so recording one costs no API call and
 * no time on the request path (Powertools docs, "Metrics"; CloudWatch docs, "Embedded metric format").
 *
 * Every metric is in {@link METRICS_NAMESPACE} with the `service` dimension (env
 * `POWERTOOLS_SERVICE_NAME`; the stack sets its own stack name, so two stacks in one account never mix
 * their numbers). Some are also published with one more dimension (a second EMF line), listed below.
 * Call sites record with one line; the handlers flush once per invocation ({@link publishMetrics}).
 *
 * | metric | unit | extra dimension | recorded when |
 * |---|---|---|---|
 * | `Requests` | Count | `function` + `version` too | every request a gateway function answers, any route, any status |
 * | `ClientErrors` / `ServerErrors` | Count | `function` + `version` too (`ServerErrors`) | the answer is a 4xx / a 5xx |
 * | `Errors` | Count | `statusCode` only | the answer is ≥ 400: errors by status |
 * | `Fallbacks` | Count | `model` (requested) | a request was answered by another target than the first one tried |
 * | `BreakerOpened` | Count | `target` (`provider:upstreamModel`) | a target's circuit breaker opens (per container) |
 * | `PromptTokens` / `CompletionTokens` | Count | | a request is settled: the tokens billed |
 * | `CostNanoUsd` | None (nano-USD) | | a request is settled: what the account was charged |
 * | `UsageEstimated` | Count | | a settled request's tokens are our tokenizer's estimate, not the upstream's count |
 * | `TimeToFirstToken` | Milliseconds | | a stream's first token is ready to send (fallbacks included) |
 * | `Overhead` | Milliseconds | | an answered request: modelmux's own time (before the first upstream attempt, and after the answer arrived) |
 * | `SettleFailures` | Count | | a settle did not land on the request path (the entry waits for replay) |
 * | `HoldsPending` | Count | | gauge: holds not settled yet (the settle sweep / queue consumer) |
 * | `HoldsOverdue` | Count | | gauge: holds pending past their settle bound (alarmed) |
 * | `SettlesRetried` | Count | | a settle retried through the durable path |
 * | `UpstreamOverHoldNanoUsd` | None (nano-USD) | | a settle whose reported usage cost more than its hold: the part not charged (the platform's loss; alarmed) |
 * | `DirectAccessRefused` | Count | | a call to a Function URL around CloudFront was refused (403; alarmed) |
 * | `StripeWebhookSignatureFailures` | Count | | a Stripe webhook delivery without a valid signature was refused (400, nothing written; alarmed) |
 * | `StripeWebhookFailures` | Count | | a verified Stripe event was not applied (409 or 5xx), so Stripe delivers it again (alarmed) |
 */

import { METRICS_NAMESPACE, MetricName, type MetricNameValue, VersionDimension } from '../config/stack-contract';
import { config } from '../config/env';

/** The extra dimensions some metrics carry (besides `service`). */
export const MetricDimension = { statusCode: 'statusCode', model: 'model', target: 'target' } as const;

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];
type Dimensions = Readonly<Record<string, string>>;

/**
 * One Powertools `Metrics` buffer per dimension combination (an EMF line has one set of dimensions
 * for all its values). Created on first use and kept for the container: the combinations are bounded
 * (statuses, catalogue models, targets).
 */
const buffers = new Map<string, Metrics>();

function buffer(dimensions: Dimensions): Metrics {
  const key = JSON.stringify(dimensions);
  let metrics = buffers.get(key);
  if (metrics === undefined) {
    metrics = new Metrics({
      namespace: METRICS_NAMESPACE,
      serviceName: config().POWERTOOLS_SERVICE_NAME,
      ...(Object.keys(dimensions).length > 0 ? { defaultDimensions: { ...dimensions } } : {}),
    });
    buffers.set(key, metrics);
  }
  return metrics;
}

const NO_DIMENSIONS: Dimensions = {};

function add(name: MetricNameValue, unit: Unit, value: number, dimensions: Dimensions = NO_DIMENSIONS): void {
  if (!Number.isFinite(value)) return;
  buffer(dimensions).addMetric(name, unit, value);
}

/**
 * The function and version answering in this container (the Lambda runtime's facts; a version is
 * `$LATEST` or a published number), or undefined off Lambda. Read per call: a test may set them.
 */
function versionDimensions(): Dimensions | undefined {
  const name = process.env.AWS_LAMBDA_FUNCTION_NAME;
  const version = process.env.AWS_LAMBDA_FUNCTION_VERSION;
  if (name === undefined || name === '' || version === undefined || version === '') return undefined;
  return { [VersionDimension.function]: name, [VersionDimension.version]: version };
}

/**
 * One answered request (edge): `Requests`, and for an error status `ClientErrors`/`ServerErrors` and
 * `Errors` by `statusCode`. On Lambda, `Requests` and `ServerErrors` are also published by `function`
 * and `version`: the series a canary's rollback alarm reads (the new version's own 5xx answers; the
 * handlers turn failures into 500 answers, which Lambda's own `Errors` metric never sees).
 * @param status the HTTP status sent to the client.
 */
export function recordRequest(status: number): void {
  const byVersion = versionDimensions();
  add(MetricName.Requests, MetricUnit.Count, 1);
  if (byVersion !== undefined) add(MetricName.Requests, MetricUnit.Count, 1, byVersion);
  if (status < 400) return;
  add(status >= 500 ? MetricName.ServerErrors : MetricName.ClientErrors, MetricUnit.Count, 1);
  if (status >= 500 && byVersion !== undefined) add(MetricName.ServerErrors, MetricUnit.Count, 1, byVersion);
  add(MetricName.Errors, MetricUnit.Count, 1, { [MetricDimension.statusCode]: String(status) });
}

/**
 * A request answered by another target than the first one tried (retries on the same target are
 * not fallbacks). Published in total and by the requested model.
 */
export function recordFallback(requestedModel: string): void {
  add(MetricName.Fallbacks, MetricUnit.Count, 1);
  add(MetricName.Fallbacks, MetricUnit.Count, 1, { [MetricDimension.model]: requestedModel });
}

/** A target's circuit breaker opened in this container. `target` is `provider:upstreamModel`. */
export function recordBreakerOpened(target: string): void {
  add(MetricName.BreakerOpened, MetricUnit.Count, 1);
  add(MetricName.BreakerOpened, MetricUnit.Count, 1, { [MetricDimension.target]: target });
}

/** What one settled request was billed: tokens, cost (nano-USD), and whether the counts were estimated. */
export interface SettledUsage {
  promptTokens: number;
  completionTokens: number;
  costNanoUsd: number;
  /** True when the token counts are our tokenizer's, not the upstream's. */
  estimated: boolean;
}

/** A request settled in the ledger: `PromptTokens`, `CompletionTokens`, `CostNanoUsd`, `UsageEstimated`. */
export function recordSettled(usage: SettledUsage): void {
  add(MetricName.PromptTokens, MetricUnit.Count, usage.promptTokens);
  add(MetricName.CompletionTokens, MetricUnit.Count, usage.completionTokens);
  add(MetricName.CostNanoUsd, MetricUnit.NoUnit, usage.costNanoUsd);
  if (usage.estimated) add(MetricName.UsageEstimated, MetricUnit.Count, 1);
}

/**
 * A settle whose reported usage cost more than its hold (an upstream past the output limit, or
 * over-reporting): `lossNanoUsd`, the part the account was not charged (billing/settle.ts).
 */
export function recordOverHoldLoss(lossNanoUsd: number): void {
  add(MetricName.UpstreamOverHoldNanoUsd, MetricUnit.NoUnit, lossNanoUsd);
}

/** A settle that did not land on the request path (failed or timed out); the entry awaits replay. */
export function recordSettleFailure(): void {
  add(MetricName.SettleFailures, MetricUnit.Count, 1);
}

/** A stream's first token is ready, `ms` after the request arrived (fallbacks included). */
export function recordTimeToFirstToken(ms: number): void {
  add(MetricName.TimeToFirstToken, MetricUnit.Milliseconds, ms);
}

/**
 * modelmux's own time on an answered request (ms): from its arrival to its first upstream attempt
 * (authentication, validation, admission, routing plan), plus from the answering attempt's end to the
 * answer being ready. Time spent in upstream attempts, and waiting between them, is not counted.
 */
export function recordOverhead(ms: number): void {
  add(MetricName.Overhead, MetricUnit.Milliseconds, Math.max(0, ms));
}

/**
 * Pending holds as one sweep saw them (gauges, for the settle function): `pending` holds
 * not settled yet, `overdue` of them past their settle bound (the stack alarms on it).
 */
export function recordPendingHolds(counts: { pending: number; overdue: number }): void {
  add(MetricName.HoldsPending, MetricUnit.Count, counts.pending);
  add(MetricName.HoldsOverdue, MetricUnit.Count, counts.overdue);
}

/** `count` settles retried through the durable path (queue redelivery or sweep). */
export function recordSettlesRetried(count = 1): void {
  add(MetricName.SettlesRetried, MetricUnit.Count, count);
}

/** A direct call to a Function URL (without the origin secret) was refused (edge/origin-secret.ts). */
export function recordDirectAccessRefused(): void {
  add(MetricName.DirectAccessRefused, MetricUnit.Count, 1);
}

/**
 * A delivery to the Stripe webhook refused for its signature (missing, tampered, another endpoint's
 * secret, or older than the SDK's 300-s tolerance): a 400 that writes nothing
 * (account-api/stripe-webhook-route.ts). A few are probes; a steady stream is a wrong signing secret.
 */
export function recordStripeWebhookSignatureFailure(): void {
  add(MetricName.StripeWebhookSignatureFailures, MetricUnit.Count, 1);
}

/**
 * A verified Stripe event that was not applied: a 409 (its payment not credited yet) or an error
 * answered 5xx. Stripe retries any non-2xx answer for up to 3 days, so the money waits until a
 * delivery succeeds (account-api/stripe-webhook-route.ts).
 */
export function recordStripeWebhookFailure(): void {
  add(MetricName.StripeWebhookFailures, MetricUnit.Count, 1);
}

/** Invocations of this module instance between {@link invocationStarted} and their {@link publishMetrics}. */
let inFlight = 0;

/** An invocation began (edge/function-url.ts); its {@link publishMetrics} with its request id ends it. */
export function invocationStarted(): void {
  inFlight += 1;
}

/**
 * Writes every buffered metric as EMF lines and empties the buffers. The handlers call it once per
 * invocation, after the response and the settle; nothing is written when nothing was recorded.
 * @param requestId our request id, written on each line as metadata (searchable in the logs, not a
 *   dimension: it costs no metric) when this invocation was the only one in flight.
 */
export function publishMetrics(requestId?: string): void {
  // The buffers belong to the module instance, which Lambda Managed Instances share between the
  // invocations in flight: a line names the request only when no other invocation could have recorded
  // into it (docs/managed-instances.md §3).
  const alone = inFlight <= 1;
  if (requestId !== undefined) inFlight = Math.max(0, inFlight - 1);
  for (const metrics of buffers.values()) {
    if (!metrics.hasStoredMetrics()) continue;
    if (requestId !== undefined && alone) metrics.addMetadata('requestId', requestId);
    metrics.publishStoredMetrics();
  }
}
