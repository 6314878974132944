import { type FunctionUrl, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { type GatewayEndpointProps, gatewayEnvironment, grantGatewayRuntime } from './endpoint-props';
import { GatewayFunction } from './gateway-function';
import { shutdownExtension } from './shutdown-extension';

/**
 * Memory of the embeddings function when the `embeddingsMemoryMb` context value is not given, MB, chosen
 * as CHAT_DEFAULT_MEMORY_MB is. Its bundle is the chat bundle with another entry (same size, INIT 211 ms
 * median beside the chat's 210: docs/dynamodb-client.md, "Cold start and memory"), so the same size.
 */
export const EMBEDDINGS_DEFAULT_MEMORY_MB = 576;

/** Props of {@link EmbeddingsEndpoint}. */
export interface EmbeddingsEndpointProps extends GatewayEndpointProps {
  /**
   * Invocation timeout in seconds. Default 60, CloudFront's default origin read timeout: one upstream
   * embeddings call (with fallback) answers in well under 30, but an image can take most of a minute
   * at high quality (its attempt waits up to 50 s: catalogue `IMAGE_TIMEOUTS`); a longer wait is a
   * stuck upstream, better failed than billed.
   */
  readonly timeoutSeconds?: number;
}

/**
 * The buffered endpoint: `functions/embeddings/handler.ts` behind a Function URL in BUFFERED mode
 * (response up to 6 MB; Lambda docs, config-rs-invoke-furls), serving embeddings and image generation.
 * Both answer one JSON body, so
 * streaming would buy nothing; a separate function keeps its memory and timeout independent of chat's.
 */
export class EmbeddingsEndpoint extends Construct {
  /** The function and its log group. */
  readonly gateway: GatewayFunction;
  /** The public Function URL (ends with `/`). */
  readonly url: FunctionUrl;

  constructor(scope: Construct, id: string, props: EmbeddingsEndpointProps) {
    super(scope, id);
    this.gateway = new GatewayFunction(this, 'Gateway', {
      entry: 'functions/embeddings/handler.ts',
      description: 'modelmux: /v1/embeddings, /v1/images/generations and the Gemini API embedContent (buffered)',
      timeoutSeconds: props.timeoutSeconds ?? 60,
      memorySize: props.memorySize ?? EMBEDDINGS_DEFAULT_MEMORY_MB,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetentionDays: props.logRetentionDays,
      tracing: props.tracing,
      liveAlias: props.liveAlias,
      ...(props.shutdownExtension === true ? { layers: [shutdownExtension(this)] } : {}),
      environment: gatewayEnvironment(props),
    });
    grantGatewayRuntime(this.gateway.function, props);
    this.url = this.gateway.addPublicUrl(InvokeMode.BUFFERED);
  }
}
