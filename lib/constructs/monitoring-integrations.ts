import { ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IRule } from 'aws-cdk-lib/aws-events';
import { MetricName } from '../../functions/shared/config/stack-contract';
import type { Monitoring } from './monitoring';
import { own, ruleFailedInvocations, sesReputation } from './monitoring-metrics';

/**
 * Alarms on what the stack hands work to or takes it from outside its own functions: the orphan
 * sweep's EventBridge schedule, Stripe's webhook deliveries, and Amazon SES's verdict on the mail it
 * sends. Each joins the stack's alarm topic through {@link Monitoring.alarm} (README, "Runbook").
 */

/**
 * Stripe webhook deliveries refused for their signature in 5 minutes that raise the alarm: one or two
 * are someone probing the public URL; a steady stream is Stripe signing with a secret the stack does
 * not hold (a rolled signing secret, or the endpoint of another stack), and every payment waiting.
 */
export const STRIPE_SIGNATURE_FAILURES_THRESHOLD = 5;

/**
 * The SES account's bounce rate (fraction of sent mail) at which Amazon SES places the account under
 * review, and pauses its sending at 10% if it is not brought down (SES docs, "Reputation metrics
 * messages", https://docs.aws.amazon.com/ses/latest/dg/reputationdashboardmessages.html): 5%.
 */
export const SES_BOUNCE_RATE_ALARM = 0.05;

/**
 * The SES account's complaint rate (fraction of sent mail) at which Amazon SES places the account
 * under review, and pauses it at 0.5% (same page as {@link SES_BOUNCE_RATE_ALARM}): 0.1%.
 */
export const SES_COMPLAINT_RATE_ALARM = 0.001;

/**
 * An alarm on a schedule rule's permanently failed invocations (`<name>FailedInvocations`): EventBridge
 * could not invoke the target after its retries (its permission gone, the function deleted, throttled
 * for the whole retry window). A function that is invoked and then fails counts in its own `…Errors`
 * alarm instead (EventBridge invokes Lambda asynchronously).
 */
export function addRuleAlarm(monitoring: Monitoring, name: string, rule: IRule): void {
  // EventBridge sends FailedInvocations only when it is not zero: no data is no failure. A schedule that
  // stops firing at all shows as the dead-letter alarm's missing data (the sweep keeps that queue's metrics flowing).
  monitoring.alarm(`${name}FailedInvocations`, ruleFailedInvocations(rule.ruleName), 1, {
    description: `EventBridge could not invoke the ${name} rule's target in 5 minutes (after its retries): orphaned holds are not being settled. See README, Runbook.`,
    missingData: TreatMissingData.NOT_BREACHING,
  });
}

/**
 * Alarms on Stripe's webhook (the account function): {@link STRIPE_SIGNATURE_FAILURES_THRESHOLD} or
 * more deliveries refused for their signature in 5 minutes (`StripeWebhookSignatures`), and any
 * verified event not applied, a 409 or a 5xx that makes Stripe deliver it again (`StripeWebhookFailures`).
 */
export function addStripeWebhookAlarms(monitoring: Monitoring, service: string): void {
  // Both metrics are written only when a delivery fails: no data is no failure (or no payments at all).
  monitoring.alarm('StripeWebhookSignatures', own(service, MetricName.StripeWebhookSignatureFailures, 'Sum'), STRIPE_SIGNATURE_FAILURES_THRESHOLD, {
    description: `At least ${STRIPE_SIGNATURE_FAILURES_THRESHOLD} Stripe webhook deliveries in 5 minutes had no valid signature (400, nothing credited): the Stripe secret's STRIPE_WEBHOOK_SECRET is not the endpoint's signing secret, or someone is probing. See README, Runbook.`,
    missingData: TreatMissingData.NOT_BREACHING,
  });
  monitoring.alarm('StripeWebhookFailures', own(service, MetricName.StripeWebhookFailures, 'Sum'), 1, {
    description:
      "A verified Stripe event was not applied in 5 minutes (a 409: its payment not credited yet; or a 5xx): Stripe delivers it again for up to 3 days, and the money waits. See README, Runbook, and the account function's log.",
    missingData: TreatMissingData.NOT_BREACHING,
  });
}

/**
 * Alarms on the SES account's reputation in the stack's region (every sender of the account there, not
 * only this stack's mail): the bounce rate at {@link SES_BOUNCE_RATE_ALARM} and the complaint rate at
 * {@link SES_COMPLAINT_RATE_ALARM}, the rates at which Amazon SES places the account under review and
 * then pauses its sending (Cognito's sign-up codes included).
 */
export function addMailReputationAlarms(monitoring: Monitoring): void {
  // Missing data keeps the alarm's state (IGNORE): the rates are levels over the account's recent mail
  // that SES publishes only once it has seen a bounce or complaint, and as it recomputes them. A quiet
  // hour neither raises the alarm nor clears it (NOT_BREACHING would send an OK while the account is
  // still under review); before the first bounce the alarm stays INSUFFICIENT_DATA, measured nothing.
  const opts = { missingData: TreatMissingData.IGNORE, comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD };
  monitoring.alarm('MailBounceRate', sesReputation('Reputation.BounceRate'), SES_BOUNCE_RATE_ALARM, {
    ...opts,
    description: `The SES account's bounce rate in this region reached ${SES_BOUNCE_RATE_ALARM * 100}%: Amazon SES reviews the account, and pauses its sending (Cognito's codes included) at 10%. See README, Runbook.`,
  });
  monitoring.alarm('MailComplaintRate', sesReputation('Reputation.ComplaintRate'), SES_COMPLAINT_RATE_ALARM, {
    ...opts,
    description: `The SES account's complaint rate in this region reached ${SES_COMPLAINT_RATE_ALARM * 100}%: Amazon SES reviews the account, and pauses its sending (Cognito's codes included) at 0.5%. See README, Runbook.`,
  });
}
