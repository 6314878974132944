import { RemovalPolicy } from 'aws-cdk-lib';
import { AccountRootPrincipal, Effect, type IGrantable, type IRole, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/**
 * What the account root may do with the key: administer it (KMS docs, "Default key policy": the key
 * administrators' statement), never encrypt or decrypt with it.
 */
const KEY_ADMIN_ACTIONS = [
  'kms:Create*',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

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
    // Key policy: the account may administer the key (so IAM can never lock it out) but not use it;
    // use is granted by restrictTo to the roles that need it, by name.
    this.policy = new PolicyDocument({
      statements: [
        new PolicyStatement({
          sid: 'KeyAdministration',
          effect: Effect.ALLOW,
          principals: [new AccountRootPrincipal()],
          actions: KEY_ADMIN_ACTIONS,
          resources: ['*'],
        }),
      ],
    });
    this.key = new Key(this, 'Key', {
      description: "modelmux: envelope encryption of users' own provider keys (BYOK)",
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      policy: this.policy,
    });
  }

  private readonly policy: PolicyDocument;

  /**
   * Names in the key policy the roles that may use the key, with the BYOK encryption context: the
   * account function's role may GenerateDataKey, the upstream-calling functions' roles may Decrypt.
   * Their identity policies (grantGenerateDataKey, grantDecrypt) say the same; both must allow.
   */
  restrictTo(roles: { generateDataKey: readonly IRole[]; decrypt: readonly IRole[] }): void {
    const use = (sid: string, actions: string[], principals: readonly IRole[]) =>
      this.policy.addStatements(
        new PolicyStatement({
          sid,
          effect: Effect.ALLOW,
          principals: principals.map((r) => r.grantPrincipal),
          actions,
          resources: ['*'],
          conditions: { StringEquals: { 'kms:EncryptionContext:purpose': BYOK_CONTEXT_PURPOSE } },
        }),
      );
    use('ByokGenerateDataKey', ['kms:GenerateDataKey'], roles.generateDataKey);
    use('ByokDecrypt', ['kms:Decrypt'], roles.decrypt);
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
