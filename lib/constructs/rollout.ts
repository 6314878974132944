import { Validations } from 'aws-cdk-lib';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { DeploymentConfigName } from '../stack-context';

/** The deployment configuration when the stack names none: 10% of traffic for 5 minutes, then all. */
export const DEFAULT_DEPLOYMENT_CONFIG: DeploymentConfigName = 'LambdaCanary10Percent5Minutes';

/** Props of {@link Rollout}. */
export interface RolloutProps {
  /** CodeDeploy's predefined configuration (stack-context.ts DEPLOYMENT_CONFIGS). Default {@link DEFAULT_DEPLOYMENT_CONFIG}. */
  readonly deploymentConfig?: DeploymentConfigName;
}

/**
 * Safe rollouts of the request functions: one CodeDeploy application, and per function a deployment
 * group that shifts its `live` alias (the one its Function URL serves) from the old version to the new
 * one by the chosen configuration, and rolls back when the deployment fails or any of its alarms
 * ({@link addAlarms}: the new version's own 5xx rate and errors, per function) goes off while it shifts
 * (CodeDeploy docs, "Deployments on an AWS Lambda compute platform"). A first deploy, or one that
 * changes nothing in a function, publishes no new version and shifts nothing.
 */
export class Rollout extends Construct {
  readonly application: LambdaApplication;
  private readonly groups = new Map<string, { group: LambdaDeploymentGroup; alias: Alias }>();
  private readonly config: DeploymentConfigName;

  constructor(scope: Construct, id: string, props: RolloutProps = {}) {
    super(scope, id);
    this.application = new LambdaApplication(this, 'Application');
    this.config = props.deploymentConfig ?? DEFAULT_DEPLOYMENT_CONFIG;
  }

  /** A deployment group for `alias`; `alarms` roll it back (more: {@link addAlarm}). */
  addAlias(name: string, alias: Alias, alarms: readonly IAlarm[] = []): LambdaDeploymentGroup {
    const group = new LambdaDeploymentGroup(this, name, {
      application: this.application,
      alias,
      deploymentConfig: deploymentConfigOf(this.config),
      alarms: [...alarms],
      // deploymentInAlarm: on by default once an alarm is added (addAlarms); a stack without monitoring has none.
      autoRollback: { failedDeployment: true, stoppedDeployment: true },
    });
    Validations.of(group).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's service role for Lambda: the AWS-managed AWSCodeDeployRoleForLambdaLimited allows only reading alarms, publishing to SNS topics named CodeDeployTopic*, and lambda:UpdateAlias/GetAlias/GetProvisionedConcurrencyConfig; it is the role CodeDeploy documents for Lambda deployments.",
    });
    this.groups.set(name, { group, alias });
    return group;
  }

  /**
   * Adds alarms to the deployment group `name` only (its function's own canary alarms): while one is
   * in ALARM, that function's shift rolls back. The alias is updated after the alarms, so an alarm
   * that names the new version is in place before the shift starts.
   */
  addAlarms(name: string, alarms: readonly IAlarm[]): void {
    const entry = this.groups.get(name);
    if (entry === undefined) throw new Error(`Rollout: no deployment group ${name}`);
    for (const alarm of alarms) {
      entry.group.addAlarm(alarm);
      if (alarm instanceof Construct) entry.alias.node.addDependency(alarm);
    }
  }
}

function deploymentConfigOf(name: DeploymentConfigName) {
  const predefined = {
    LambdaCanary10Percent5Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
    LambdaCanary10Percent10Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
    LambdaCanary10Percent15Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_15MINUTES,
    LambdaCanary10Percent30Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_30MINUTES,
    LambdaLinear10PercentEvery1Minute: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
    LambdaLinear10PercentEvery2Minutes: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_2MINUTES,
    LambdaLinear10PercentEvery3Minutes: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_3MINUTES,
    LambdaLinear10PercentEvery10Minutes: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_10MINUTES,
    LambdaAllAtOnce: LambdaDeploymentConfig.ALL_AT_ONCE,
  } satisfies Record<DeploymentConfigName, unknown>;
  return predefined[name];
}
