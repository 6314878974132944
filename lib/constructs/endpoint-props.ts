import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { SETTLE_QUEUE_URL_ENV, UPSTREAM_SECRET_ARN_ENV } from '../../functions/shared/config/stack-contract';
import type { SettlePath } from './settle-path';
import type { ByokKey } from './byok-key';
import type { DataTables } from './data-tables';
import type { OriginSecret } from './origin-secret';
import type { UpstreamSecret } from './upstream-secret';

/** What both endpoints (chat, embeddings) need from the rest of the stack. */
export interface GatewayEndpointProps {
  /** The tables: names go into env, the request-path actions into the role. */
  readonly tables: DataTables;
  /** The upstream-keys secret: its ARN goes into env, GetSecretValue into the role. */
  readonly upstreamSecret: UpstreamSecret;
  /** Extra plain env, e.g. `OPENAI_BASE_URL` overrides. Never keys: those live in the secret. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Reserved concurrency; default none (scale to zero, pay per use). See GatewayFunctionProps. */
  readonly reservedConcurrentExecutions?: number;
  /** Memory in MB; default per endpoint (CHAT_DEFAULT_MEMORY_MB, EMBEDDINGS_DEFAULT_MEMORY_MB). */
  readonly memorySize?: number;
  /** The durable settle path: its queue URL goes into env, SendMessage into the role. */
  readonly settle?: SettlePath;
  /** The BYOK key: its ARN goes into env, kms:Decrypt (BYOK context only) into the role. */
  readonly byokKey?: ByokKey;
  /** CloudFront's origin secret: when set, the function refuses requests without it (ORIGIN_SECRET_ARN). */
  readonly originSecret?: OriginSecret;
  /** Days the function's logs are kept (see GatewayFunctionProps). */
  readonly logRetentionDays?: number;
  /** X-Ray tracing (see GatewayFunctionProps). */
  readonly tracing?: boolean;
  /** Versions and a `live` alias the Function URL serves (see GatewayFunctionProps). */
  readonly liveAlias?: boolean;
  /**
   * Attach the shutdown extension (lib/constructs/shutdown-extension.ts), so the function gets SIGTERM
   * before Lambda ends an environment and returns its credit leases. Default false.
   */
  readonly shutdownExtension?: boolean;
}

/** Env every gateway function gets from the stack: table names, the secret ARNs, then `extra`. */
export function gatewayEnvironment(props: GatewayEndpointProps): Record<string, string> {
  return {
    ...props.tables.environment,
    [UPSTREAM_SECRET_ARN_ENV]: props.upstreamSecret.secretId,
    ...(props.settle ? { [SETTLE_QUEUE_URL_ENV]: props.settle.queue.queueUrl } : {}),
    ...props.byokKey?.environment,
    ...props.originSecret?.environment,
    ...props.environment,
  };
}

/** Grants a gateway function its request-path table actions and GetSecretValue on the upstream (and origin) secret. */
export function grantGatewayRuntime(grantee: IGrantable, props: GatewayEndpointProps): void {
  props.tables.grantGatewayAccess(grantee);
  props.upstreamSecret.grantGetSecretValue(grantee);
  props.settle?.grantSend(grantee);
  props.settle?.grantDepthRead(grantee);
  props.byokKey?.grantDecrypt(grantee);
  props.originSecret?.grantRead(grantee);
}
