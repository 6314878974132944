import { type FunctionUrl, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { SETTLE_RESERVE_MS } from '../../functions/shared/config/stack-contract';
import { type GatewayEndpointProps, gatewayEnvironment, grantGatewayRuntime } from './endpoint-props';
import { GatewayFunction } from './gateway-function';
import { shutdownExtension } from './shutdown-extension';

/**
 * Memory of the chat function when the `chatMemoryMb` context value is not given, MB. Lambda bills
 * memory × duration, and a chat invocation lasts as long as the upstream writes, so this is the main
 * lever of the AWS cost per request; CPU (and so our own share of the duration and the cold start)
 * scales with it (1,769 MB = one vCPU; Lambda Developer Guide, "Configure Lambda function memory").
 * Chosen as the least memory in 64 MB steps whose INIT estimate (the deployed bundle's CPU from process
 * start to handler ready on Node 24, both Secrets Manager reads included, × 1,769 / memory) stays within
 * 800 ms, plus one step of margin (docs/dynamodb-client.md, "Cold start and memory", 2026-11-27: 210 ms
 * median on a loaded host, so 512 MB estimates 725 ms and 576 MB 645 ms). Memory use stays far below it
 * (the lazily loaded tokenizer included).
 */
export const CHAT_DEFAULT_MEMORY_MB = 576;

/** Props of {@link ChatEndpoint}. */
export interface ChatEndpointProps extends GatewayEndpointProps {
  /**
   * Invocation timeout in seconds. Default 300: a streamed answer lasts as long as the model writes
   * (a 10,000-token answer at 40 tokens/s is ~250 s, plus time to first token on reasoning models).
   * Lambda allows up to 900; a client gone away does not stop the invocation, and the full run time is
   * billed (Lambda docs, configuration-response-streaming), so the cap is also a cost bound.
   */
  readonly timeoutSeconds?: number;
  /**
   * How long a buffered (non-streamed) chat request may spend on upstream attempts, ms
   * (`BUFFERED_CHAT_BUDGET_MS`, functions/shared/config/env.ts). It must end before any proxy
   * in front gives up on a silent origin: behind CloudFront, its origin read timeout less a margin.
   * Default: the function timeout less the settle reserve (no proxy in front).
   */
  readonly bufferedChatBudgetMs?: number;
}

/**
 * The streaming endpoint: `functions/chat-completions/handler.ts` (wrapped in
 * `awslambda.streamifyResponse`) behind a Function URL in RESPONSE_STREAM mode, so SSE chunks reach the
 * client as they are written (up to 200 MB; first 6 MB uncapped, then 2 MBps). It also serves every
 * path that is not `/v1/embeddings` (chat completions, `/v1/models`, 404s).
 */
export class ChatEndpoint extends Construct {
  /** The function and its log group. */
  readonly gateway: GatewayFunction;
  /** The public Function URL (ends with `/`). */
  readonly url: FunctionUrl;

  constructor(scope: Construct, id: string, props: ChatEndpointProps) {
    super(scope, id);
    const timeoutSeconds = props.timeoutSeconds ?? 300;
    const bufferedChatBudgetMs = props.bufferedChatBudgetMs ?? timeoutSeconds * 1000 - SETTLE_RESERVE_MS;
    this.gateway = new GatewayFunction(this, 'Gateway', {
      entry: 'functions/chat-completions/handler.ts',
      description: 'modelmux: /v1/chat/completions (streaming), /v1/models',
      timeoutSeconds,
      memorySize: props.memorySize ?? CHAT_DEFAULT_MEMORY_MB,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetentionDays: props.logRetentionDays,
      tracing: props.tracing,
      liveAlias: props.liveAlias,
      ...(props.shutdownExtension === true ? { layers: [shutdownExtension(this)] } : {}),
      environment: { ...gatewayEnvironment(props), BUFFERED_CHAT_BUDGET_MS: String(bufferedChatBudgetMs) },
    });
    grantGatewayRuntime(this.gateway.function, props);
    // Only this function serves /v1/responses (stored responses: responses/response-store.ts).
    props.tables.grantResponsesAccess(this.gateway.function);
    this.url = this.gateway.addPublicUrl(InvokeMode.RESPONSE_STREAM);
  }
}
