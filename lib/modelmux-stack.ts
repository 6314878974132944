import { CfnOutput, Fn, type RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { UPSTREAM_BASE_URL_VARS, type UpstreamBaseUrlVar } from '../functions/shared/providers/credentials';
import { SETTLE_RESERVE_MS } from '../functions/shared/edge/function-url';
import { ACCOUNT_PATH_PATTERNS } from '../functions/shared/account-api/paths';
import { AccountEndpoint } from './constructs/account-endpoint';
import { ApiDistribution, DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS } from './constructs/api-distribution';
import { ByokKey } from './constructs/byok-key';
import { ChatEndpoint } from './constructs/chat-endpoint';
import { DataTables } from './constructs/data-tables';
import { EmbeddingsEndpoint } from './constructs/embeddings-endpoint';
import { Identity } from './constructs/identity';
import { Site } from './constructs/site';
import { UpstreamSecret } from './constructs/upstream-secret';

/** Props of {@link ModelmuxStack}; `bin/app.ts` fills them from CDK context (see `stack-context.ts`). */
export interface ModelmuxStackProps extends StackProps {
  /** Put a CloudFront distribution in front so chat and embeddings share one base URL. Default true. */
  readonly cloudfront?: boolean;
  /** Import this secret (full ARN or name) instead of creating `modelmux/upstream-keys`. */
  readonly upstreamSecretName?: string;
  /** Plain-env base-URL overrides, e.g. `{ OPENAI_BASE_URL: 'https://…/v1' }`. Only `*_BASE_URL` names. */
  readonly upstreamBaseUrls?: Readonly<Partial<Record<UpstreamBaseUrlVar, string>>>;
  /** Reserved concurrency of the chat function; default none. */
  readonly chatReservedConcurrency?: number;
  /** Reserved concurrency of the embeddings function; default none. */
  readonly embeddingsReservedConcurrency?: number;
  /** Memory of the chat function, MB; default the ChatEndpoint's (see `npm run bench`'s cost table). */
  readonly chatMemoryMb?: number;
  /** Memory of the embeddings function, MB; default the EmbeddingsEndpoint's. */
  readonly embeddingsMemoryMb?: number;
  /** Removal policy of the tables; default RETAIN (see DataTables). */
  readonly tableRemovalPolicy?: RemovalPolicy;
  /**
   * The URL people reach the deployment at (e.g. `https://api.example.com`), for messages that point to
   * the dashboard (`PUBLIC_BASE_URL`). Default: derived from each request's host.
   */
  readonly publicBaseUrl?: string;
}

/**
 * modelmux in one stack: three on-demand tables, the upstream-keys secret, the chat function (streaming
 * Function URL), the embeddings function (buffered Function URL) and, by default, a CloudFront
 * distribution giving both one base URL. Nothing runs or costs while idle except storage.
 */
export class ModelmuxStack extends Stack {
  constructor(scope: Construct, id: string, props: ModelmuxStackProps = {}) {
    super(scope, id, {
      description: 'modelmux: OpenAI-compatible model-routing API (Lambda Function URLs + DynamoDB)',
      ...props,
    });

    const tables = new DataTables(this, 'Data', { removalPolicy: props.tableRemovalPolicy });
    const upstreamSecret = new UpstreamSecret(this, 'UpstreamKeys', { importSecret: props.upstreamSecretName });
    const environment = { ...baseUrlEnvironment(props.upstreamBaseUrls ?? {}), ...(props.publicBaseUrl ? { PUBLIC_BASE_URL: props.publicBaseUrl } : {}) };
    const identity = new Identity(this, 'Identity');
    const byokKey = new ByokKey(this, 'Byok');

    const cloudfront = props.cloudfront ?? true;
    const chat = new ChatEndpoint(this, 'Chat', {
      tables,
      upstreamSecret,
      byokKey,
      environment,
      reservedConcurrentExecutions: props.chatReservedConcurrency,
      memorySize: props.chatMemoryMb,
      // Behind CloudFront a buffered answer must be out before the origin read timeout, or the client
      // gets CloudFront's 504 while the answer is still produced and billed.
      ...(cloudfront ? { bufferedChatBudgetMs: DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS * 1000 - SETTLE_RESERVE_MS } : {}),
    });
    const embeddings = new EmbeddingsEndpoint(this, 'Embeddings', {
      tables,
      upstreamSecret,
      byokKey,
      environment,
      reservedConcurrentExecutions: props.embeddingsReservedConcurrency,
      memorySize: props.embeddingsMemoryMb,
    });
    const account = new AccountEndpoint(this, 'Account', {
      tables,
      identity,
      byokKey,
      environment: props.publicBaseUrl ? { PUBLIC_BASE_URL: props.publicBaseUrl } : {},
    });

    // Function URLs end with '/', so `${url}v1` is a base URL an OpenAI SDK accepts.
    const chatBaseUrl = Fn.join('', [chat.url.url, 'v1']);
    let baseUrl = chatBaseUrl;
    if (cloudfront) {
      // The dashboard (web/) is the distribution's default behaviour; the API keeps /v1/*.
      const site = new Site(this, 'Site');
      const api = new ApiDistribution(this, 'Api', {
        chatUrl: chat.url,
        embeddingsUrl: embeddings.url,
        accountUrl: account.url,
        accountPaths: ACCOUNT_PATH_PATTERNS,
        site: site.behavior,
      });
      site.deploy(api.distribution);
      baseUrl = Fn.join('', ['https://', api.distribution.distributionDomainName, '/v1']);
      new CfnOutput(this, 'DashboardUrl', {
        description: 'The account dashboard (sign up, API keys, usage)',
        value: Fn.join('', ['https://', api.distribution.distributionDomainName, '/']),
      });
      new CfnOutput(this, 'DistributionId', {
        description: 'CloudFront distribution in front of both Function URLs',
        value: api.distribution.distributionId,
      });
    }

    new CfnOutput(this, 'BaseUrl', {
      description: cloudfront
        ? 'OpenAI base URL for every endpoint (chat, embeddings, models), via CloudFront'
        : 'OpenAI base URL (chat and models only: embeddings are at EmbeddingsBaseUrl; deploy with cloudfront=true for one URL)',
      value: baseUrl,
    });
    new CfnOutput(this, 'ChatCompletionsUrl', { description: 'Chat function URL (streaming), direct', value: chat.url.url });
    new CfnOutput(this, 'EmbeddingsUrl', { description: 'Embeddings function URL (buffered), direct', value: embeddings.url.url });
    new CfnOutput(this, 'EmbeddingsBaseUrl', {
      description: 'OpenAI base URL served by the embeddings function directly',
      value: Fn.join('', [embeddings.url.url, 'v1']),
    });
    new CfnOutput(this, 'AccountUrl', { description: 'Account function URL (the account API, buffered), direct', value: account.url.url });
    new CfnOutput(this, 'UserPoolId', { description: 'Cognito user pool of the dashboard users', value: identity.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { description: "The dashboard's Cognito app client", value: identity.dashboardClient.userPoolClientId });
    new CfnOutput(this, 'ByokKeyArn', { description: "KMS key encrypting users' own provider keys", value: byokKey.key.keyArn });
    new CfnOutput(this, 'KeysTableName', { value: tables.tables.keys.tableName });
    new CfnOutput(this, 'AccountsTableName', { value: tables.tables.accounts.tableName });
    new CfnOutput(this, 'LedgerTableName', { value: tables.tables.ledger.tableName });
    new CfnOutput(this, 'UpstreamSecretArn', { value: upstreamSecret.secretId });
    new CfnOutput(this, 'PutUpstreamKeysCommand', {
      description: 'Run after deploy with upstream-keys.json = {"OPENAI_API_KEY":"...",...}; warm functions pick it up within 5 minutes',
      value: upstreamSecret.putValueCommand,
    });
  }
}

/**
 * Validates base-URL overrides: only the known `*_BASE_URL` names, only http(s) URLs. Anything else (in
 * particular a `*_API_KEY`) is refused, so no key can reach a function's plain environment this way.
 */
export function baseUrlEnvironment(overrides: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  const allowed: readonly string[] = UPSTREAM_BASE_URL_VARS;
  for (const [name, value] of Object.entries(overrides)) {
    if (!allowed.includes(name)) {
      throw new Error(`upstreamBaseUrls: ${name} is not one of ${allowed.join(', ')} (API keys belong in the secret, not in env)`);
    }
    if (value === undefined || value === '') continue;
    if (!/^https?:\/\/[^\s]+$/.test(value)) throw new Error(`upstreamBaseUrls: ${name} must be an http(s) URL`);
    env[name] = value;
  }
  return env;
}
