import { CfnBudget } from 'aws-cdk-lib/aws-budgets';
import { CfnAnomalyMonitor, CfnAnomalySubscription } from 'aws-cdk-lib/aws-ce';
import { Construct } from 'constructs';

/** Anomalies below this total impact (USD) are not mailed. */
export const ANOMALY_THRESHOLD_USD = 10;

/** Props of {@link CostGuards}. */
export interface CostGuardsProps {
  /** A monthly cost budget (USD, the whole account's unblended cost) mailing `email`. */
  readonly budget?: { readonly monthlyUsd: number; readonly email: string };
  /** Cost Anomaly Detection mailing this address daily. */
  readonly anomalyDetection?: { readonly email: string };
}

/**
 * Spend that nobody watches, caught: an AWS Budget (monthly, cost) mailing at 80% of the limit
 * actually spent and at 100% forecast, and a Cost Anomaly Detection monitor over AWS services with a
 * daily email subscription for anomalies of at least {@link ANOMALY_THRESHOLD_USD}. Both are account-wide
 * (a stack's resources share the account's bill); AWS allows one AWS-services anomaly monitor per
 * account, so set `costAnomalyDetection` on one stack only (README, "Deploying": the `costAnomalyDetection` option).
 */
export class CostGuards extends Construct {
  constructor(scope: Construct, id: string, props: CostGuardsProps) {
    super(scope, id);
    if (props.budget !== undefined) {
      const subscribers = [{ subscriptionType: 'EMAIL', address: props.budget.email }];
      new CfnBudget(this, 'MonthlyBudget', {
        budget: { budgetType: 'COST', timeUnit: 'MONTHLY', budgetLimit: { amount: props.budget.monthlyUsd, unit: 'USD' } },
        notificationsWithSubscribers: [
          { notification: { notificationType: 'ACTUAL', comparisonOperator: 'GREATER_THAN', threshold: 80, thresholdType: 'PERCENTAGE' }, subscribers },
          { notification: { notificationType: 'FORECASTED', comparisonOperator: 'GREATER_THAN', threshold: 100, thresholdType: 'PERCENTAGE' }, subscribers },
        ],
      });
    }
    if (props.anomalyDetection !== undefined) {
      const monitor = new CfnAnomalyMonitor(this, 'AnomalyMonitor', {
        monitorName: 'modelmux-services',
        monitorType: 'DIMENSIONAL',
        monitorDimension: 'SERVICE',
      });
      new CfnAnomalySubscription(this, 'AnomalySubscription', {
        subscriptionName: 'modelmux-anomalies',
        frequency: 'DAILY',
        monitorArnList: [monitor.attrMonitorArn],
        subscribers: [{ type: 'EMAIL', address: props.anomalyDetection.email }],
        thresholdExpression: JSON.stringify({
          Dimensions: { Key: 'ANOMALY_TOTAL_IMPACT_ABSOLUTE', MatchOptions: ['GREATER_THAN_OR_EQUAL'], Values: [String(ANOMALY_THRESHOLD_USD)] },
        }),
      });
    }
  }
}
