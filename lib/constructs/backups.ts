import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { BackupPlan, BackupPlanRule, BackupResource, BackupVault, type BackupPlanCopyActionProps } from 'aws-cdk-lib/aws-backup';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/** Days a daily backup (and its cross-region copy) is kept. */
export const BACKUP_RETENTION_DAYS = 35;

/** The vault in the copy region when the stack names none (create it before deploying: README). */
export const DEFAULT_BACKUP_COPY_VAULT = 'modelmux-backup-copy';

/** Props of {@link Backups}. */
export interface BackupsProps {
  /** The tables whose loss loses money or access: keys, accounts, ledger. */
  readonly tables: readonly ITable[];
  /** A region whose vault receives a copy of every backup (a region-wide outage or loss). */
  readonly copyRegion?: string;
  /** That vault's name; default {@link DEFAULT_BACKUP_COPY_VAULT}. */
  readonly copyVaultName?: string;
}

/**
 * AWS Backup for the money tables, beside their 35-day point-in-time recovery: a daily backup at
 * 03:00 UTC kept {@link BACKUP_RETENTION_DAYS} days in a retained vault of this stack, and, with
 * `copyRegion`, a copy of each into a vault in that region (it must exist: README, "Backups and
 * restore"; cross-region copies of DynamoDB need AWS Backup's advanced DynamoDB features, an
 * account-level opt-in). PITR answers "undo the last hour" (RPO ~5 min); the backups answer "the table,
 * the region or the account's copy is gone" (RPO 24 h in the copy region). {@link restoreRole} is the
 * role a restore job runs as (`aws backup start-restore-job --iam-role-arn`; output `BackupRestoreRoleArn`).
 */
export class Backups extends Construct {
  readonly vault: BackupVault;
  readonly plan: BackupPlan;
  /**
   * The role AWS Backup assumes to restore a recovery point into a new table: assumable by
   * backup.amazonaws.com only, with AWS Backup's managed restore policy
   * `service-role/AWSBackupServiceRolePolicyForRestores` (AWS Backup docs, "Managed policies for AWS Backup",
   * https://docs.aws.amazon.com/aws-backup/latest/devguide/security-iam-awsmanpol.html).
   */
  readonly restoreRole: Role;

  constructor(scope: Construct, id: string, props: BackupsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.vault = new BackupVault(this, 'Vault', { removalPolicy: RemovalPolicy.RETAIN });
    const copyActions: BackupPlanCopyActionProps[] =
      props.copyRegion === undefined
        ? []
        : [
            {
              destinationBackupVault: BackupVault.fromBackupVaultArn(
                this,
                'CopyVault',
                stack.formatArn({
                  service: 'backup',
                  region: props.copyRegion,
                  resource: 'backup-vault',
                  resourceName: props.copyVaultName ?? DEFAULT_BACKUP_COPY_VAULT,
                  arnFormat: ArnFormat.COLON_RESOURCE_NAME,
                }),
              ),
              deleteAfter: Duration.days(BACKUP_RETENTION_DAYS),
            },
          ];
    this.plan = new BackupPlan(this, 'Plan', { backupVault: this.vault });
    this.plan.addRule(
      new BackupPlanRule({
        ruleName: 'Daily',
        scheduleExpression: Schedule.cron({ hour: '3', minute: '0' }),
        deleteAfter: Duration.days(BACKUP_RETENTION_DAYS),
        copyActions,
      }),
    );
    this.restoreRole = new Role(this, 'RestoreRole', {
      description: 'AWS Backup restores of the modelmux tables (aws backup start-restore-job --iam-role-arn)',
      assumedBy: new ServicePrincipal('backup.amazonaws.com'),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSBackupServiceRolePolicyForRestores')],
    });
    Validations.of(this.restoreRole).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForRestores]',
      reason:
        'AWS Backup\'s own service-role policy for restores (AWS Backup docs, "Managed policies"): the role is assumable by backup.amazonaws.com only, and a restore only ever makes a new table from a recovery point an operator names.',
    });
    const selection = this.plan.addSelection('Tables', { resources: props.tables.map((t) => BackupResource.fromDynamoDbTable(t)) });
    Validations.of(selection).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
      reason:
        'AWS Backup\'s own service-role policy for taking backups (AWS Backup docs, "Managed policies"): the role is assumable by backup.amazonaws.com only and the selection names the three tables.',
    });
  }
}
