import { Duration } from 'aws-cdk-lib';
import {
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginRequestPolicy,
  PriceClass,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

/** Path pattern routed to the embeddings function; everything else goes to the chat function. */
export const EMBEDDINGS_PATH_PATTERN = '/v1/embeddings*';

/** With the dashboard as default behaviour, the API paths the chat function keeps. */
export const API_PATH_PATTERN = '/v1/*';

/** CloudFront's origin read timeout used by default, seconds (the most allowed without a quota increase). */
export const DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS = 60;

/** Props of {@link ApiDistribution}. */
export interface ApiDistributionProps {
  /** Default origin: chat completions, models, and every other path (streaming Function URL). */
  readonly chatUrl: IFunctionUrl;
  /** Origin for {@link EMBEDDINGS_PATH_PATTERN} (buffered Function URL). */
  readonly embeddingsUrl: IFunctionUrl;
  /** Origin for the account API's paths (`accountPaths`, buffered Function URL; issue 11). */
  readonly accountUrl?: IFunctionUrl;
  /** Path patterns routed to `accountUrl` (functions/shared/account-api/router.ts ACCOUNT_PATH_PATTERNS). */
  readonly accountPaths?: readonly string[];
  /**
   * Seconds CloudFront waits for the first byte, and then between bytes, from the origin. Default 60,
   * the most allowed without a quota increase (CloudFront docs, "Response timeout"; up to 180 on
   * request). Time to first token on reasoning models can pass CloudFront's 30 s default; a stream that
   * goes quiet longer than this is cut, so the chat handler should send SSE comments while it waits.
   */
  readonly originReadTimeoutSeconds?: number;
  /**
   * The dashboard (lib/constructs/site.ts `Site.behavior`). When given, it is the default behaviour
   * (the page at `/`, index.html as root object) and the chat function gets {@link API_PATH_PATTERN}.
   */
  readonly site?: BehaviorOptions;
}

/**
 * One base URL for the whole API. An OpenAI SDK has ONE `baseURL`, but chat (streaming) and embeddings
 * (buffered) are two functions with two Function URLs; a CloudFront distribution routes by path:
 * `/v1/embeddings*` to the embeddings URL, everything else to the chat URL. CloudFront passes Function
 * URL response streams through as they arrive (it does not buffer non-cached responses).
 *
 * Every behaviour: all methods allowed (POST, and OPTIONS for CORS preflight, answered by the Function
 * URL), caching disabled (each completion is unique and billed), every viewer header, cookie and query
 * string forwarded except Host (a Function URL routes on its own Host: forwarding the viewer's gives
 * 403). `Authorization` is among them, GET included (`/v1/models`): a custom origin request policy may
 * not list it, but with caching off the managed AllViewer/AllViewerExceptHostHeader policies forward it
 * (AWS Knowledge Center, "cloudfront-authorization-header"). Compression off (gzip would buffer SSE),
 * HTTPS only (a redirect would turn a POST into a GET).
 * No origin access control: the Function URLs are public by design (`authType: NONE`, the API key is the
 * credential), so CloudFront adds routing, not a security boundary.
 */
export class ApiDistribution extends Construct {
  /** The distribution; `https://<distributionDomainName>/v1` is the clients' base URL. */
  readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: ApiDistributionProps) {
    super(scope, id);
    const readTimeout = Duration.seconds(props.originReadTimeoutSeconds ?? DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS);
    const behaviour = (url: IFunctionUrl): BehaviorOptions => ({
      origin: new FunctionUrlOrigin(url, { readTimeout }),
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      compress: false,
    });
    // CloudFront tries path patterns in order: the embeddings and account paths must come before /v1/*.
    const additionalBehaviors: Record<string, BehaviorOptions> = {
      [EMBEDDINGS_PATH_PATTERN]: behaviour(props.embeddingsUrl),
      ...accountBehaviours(props, behaviour),
    };
    if (props.site) additionalBehaviors[API_PATH_PATTERN] = behaviour(props.chatUrl);
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'modelmux: one base URL for chat (streaming) and embeddings (buffered)',
      defaultBehavior: props.site ?? behaviour(props.chatUrl),
      ...(props.site ? { defaultRootObject: 'index.html' } : {}),
      additionalBehaviors,
      httpVersion: HttpVersion.HTTP2_AND_3,
      // No fixed cost whatever the class; ALL gives every client its nearest edge.
      priceClass: PriceClass.PRICE_CLASS_ALL,
    });
  }
}

/** One behaviour per account path, all to the account function's URL (one origin shared by them). */
function accountBehaviours(props: ApiDistributionProps, behaviour: (url: IFunctionUrl) => BehaviorOptions): Record<string, BehaviorOptions> {
  if (props.accountUrl === undefined) return {};
  const toAccount = behaviour(props.accountUrl);
  return Object.fromEntries((props.accountPaths ?? []).map((p) => [p, toAccount]));
}
