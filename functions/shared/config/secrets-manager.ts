/**
 * Secrets Manager's GetSecretValue, the one read of secrets at INIT and every 5 min after
 * (config/secret-json.ts, edge/origin-secret.ts): over the JSON 1.1 protocol (aws/aws-json.ts), so
 * the Lambda bundles carry no SDK client (docs/dynamodb-client.md, "Bundle"). Without environment
 * credentials (a local tool on a profile) it goes through the SDK's client, loaded with `import()`.
 */
import { AwsJsonClient, envCredentials } from '../aws/aws-json';

/**
 * The SDK package, for the path without environment credentials; not a literal, so esbuild leaves it
 * out of the bundles (in Lambda the credentials are always in the environment).
 */
const SECRETS_MANAGER_SDK: string = '@aws-sdk/client-secrets-manager';

/** One client per region per container. */
const clients = new Map<string, AwsJsonClient>();

/**
 * The region of `secretId`: the one in the ARN when given an ARN (an imported secret may live in another
 * region than the function, and a regional endpoint only serves its own secrets), else the runtime's.
 */
function regionOf(secretId: string): string | undefined {
  // arn:partition:secretsmanager:region:account:secret:name
  const fromArn = secretId.startsWith('arn:') ? secretId.split(':')[3] : undefined;
  return fromArn || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || undefined;
}

/**
 * The `SecretString` of `secretId` (name or ARN), `undefined` when the secret holds binary only.
 * Endpoint: `AWS_ENDPOINT_URL_SECRETS_MANAGER`, else `AWS_ENDPOINT_URL` (the SDK's service-specific
 * endpoint variables; a local stand-in), else `https://secretsmanager.<region>.amazonaws.com`. Bounded
 * (connect 2 s, answer 5 s, 3 attempts) so a network problem fails INIT or the request quickly.
 * @throws the SDK-shaped error of Secrets Manager's answer (`ResourceNotFoundException`, `AccessDeniedException`, …), `TimeoutError`.
 */
export async function getSecretString(secretId: string): Promise<string | undefined> {
  const region = regionOf(secretId);
  const credentials = envCredentials();
  if (credentials === undefined || region === undefined) {
    const sdk = (await import(SECRETS_MANAGER_SDK)) as typeof import('@aws-sdk/client-secrets-manager');
    const client = new sdk.SecretsManagerClient({ ...(region ? { region } : {}), requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000 } });
    return (await client.send(new sdk.GetSecretValueCommand({ SecretId: secretId }))).SecretString;
  }
  let client = clients.get(region);
  if (client === undefined) {
    const endpoint = process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER || process.env.AWS_ENDPOINT_URL || `https://secretsmanager.${region}.amazonaws.com`;
    client = new AwsJsonClient({
      endpoint,
      region,
      service: 'secretsmanager',
      targetPrefix: 'secretsmanager',
      jsonVersion: '1.1',
      credentials,
      maxAttempts: 3,
      connectionTimeoutMs: 2_000,
      requestTimeoutMs: 5_000,
    });
    clients.set(region, client);
  }
  const { body } = await client.call('GetSecretValue', { SecretId: secretId });
  return typeof body.SecretString === 'string' ? body.SecretString : undefined;
}
