import { RemovalPolicy } from 'aws-cdk-lib';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/** The encryption context every BYOK data key carries (functions/shared/accounts/byok/envelope.ts). */
export const BYOK_CONTEXT_PURPOSE = 'modelmux-byok';

/**
 * The KMS key under which users' own provider keys (BYOK) are envelope-encrypted. Symmetric, yearly
 * rotation, retained (losing it makes every stored key unreadable). Grants are least privilege and
 * bound to the BYOK encryption context: the account function may only GenerateDataKey (it encrypts in
 * the function with the data key; it never decrypts), the functions that call upstreams may only
 * Decrypt. Nothing else in the stack touches the key.
 */
export class ByokKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'modelmux: envelope encryption of users\' own provider keys (BYOK)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** `BYOK_KMS_KEY_ID` for the functions. */
  get environment(): Record<string, string> {
    return { BYOK_KMS_KEY_ID: this.key.keyArn };
  }

  /** kms:GenerateDataKey only, for this key and the BYOK context (the account function). */
  grantGenerateDataKey(grantee: IGrantable): void {
    this.grant(grantee, 'ByokGenerateDataKey', ['kms:GenerateDataKey']);
  }

  /** kms:Decrypt only, for this key and the BYOK context (the functions that call upstreams). */
  grantDecrypt(grantee: IGrantable): void {
    this.grant(grantee, 'ByokDecrypt', ['kms:Decrypt']);
  }

  private grant(grantee: IGrantable, sid: string, actions: string[]): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid,
        effect: Effect.ALLOW,
        actions,
        resources: [this.key.keyArn],
        conditions: { StringEquals: { 'kms:EncryptionContext:purpose': BYOK_CONTEXT_PURPOSE } },
      }),
    );
  }
}
