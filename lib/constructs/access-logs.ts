import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/** Days CloudFront access logs are kept unless the stack says otherwise. */
export const DEFAULT_ACCESS_LOG_RETENTION_DAYS = 90;

/** Props of {@link AccessLogs}. */
export interface AccessLogsProps {
  /** Days before a log file is deleted (lifecycle rule). Default {@link DEFAULT_ACCESS_LOG_RETENTION_DAYS}. */
  readonly retentionDays?: number;
}

/**
 * The S3 bucket CloudFront writes its standard access logs to (one line per viewer request: time, edge,
 * client IP, path, status, bytes, time taken; CloudFront docs, "Standard logging (legacy)"). Private,
 * encrypted (SSE-S3), TLS-only; files expire after `retentionDays`. Standard logging writes with an ACL
 * grant to the awslogsdelivery account, so object ownership is "bucket owner preferred" (ACLs enabled),
 * as CloudFront requires. Retained with the stack: what it holds is evidence, and it empties itself.
 */
export class AccessLogs extends Construct {
  /** The log bucket. */
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: AccessLogsProps = {}) {
    super(scope, id);
    const days = props.retentionDays ?? DEFAULT_ACCESS_LOG_RETENTION_DAYS;
    if (!Number.isInteger(days) || days < 1) throw new Error('accessLogRetentionDays must be a whole number of days, at least 1');
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ id: 'ExpireAccessLogs', enabled: true, expiration: Duration.days(days), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions::AwsSolutions-S1',
      reason: 'This is the access-log bucket itself; logging its own accesses to another bucket would only move the question one bucket further.',
    });
  }
}
