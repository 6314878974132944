import { Duration, Validations } from 'aws-cdk-lib';
import {
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HttpVersion,
  OriginRequestPolicy,
  PriceClass,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ORIGIN_SECRET_HEADER, VIEWER_ADDRESS_HEADER } from '../../functions/shared/config/stack-contract';
import type { CustomDomain } from './custom-domain';

/** Path pattern routed to the embeddings function; everything else goes to the chat function. */
export const EMBEDDINGS_PATH_PATTERN = '/v1/embeddings*';

/** Image generation (`/v1/images/generations`): also answered whole, by the same buffered function. */
export const IMAGES_PATH_PATTERN = '/v1/images/*';

/**
 * The Gemini API's embeddings methods (`…/models/{m}:embedContent`, `:batchEmbedContents`, under
 * `/v1beta`, `/v1` or no prefix; ai.google.dev/api/embeddings): answered whole by the buffered function
 * too. A leading `*` matches any prefix (CloudFront docs, "Path pattern": `*` is zero or more characters,
 * `:` an allowed character), so one pattern per method covers the three prefixes.
 */
export const GEMINI_EMBED_PATH_PATTERNS = ['*:embedContent', '*:batchEmbedContents'] as const;

/**
 * With the dashboard as default behaviour, the Gemini API's paths outside `/v1` that the chat function
 * keeps (`/v1beta/models…` and `/models/…` without a version prefix), added just before
 * {@link API_PATH_PATTERN}, after {@link GEMINI_EMBED_PATH_PATTERNS}.
 */
export const GEMINI_API_PATH_PATTERNS = ['/v1beta/*', '/models/*'] as const;

/**
 * With the dashboard as default behaviour, the API paths the chat function keeps. CloudFront takes the
 * first matching pattern, so this one is added LAST ({@link ApiDistribution.addFunctionBehaviour}),
 * after every other `/v1/…` route.
 */
export const API_PATH_PATTERN = '/v1/*';

/** CloudFront's origin read timeout used by default, seconds (the most allowed without a quota increase). */
export const DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS = 60;

/** Props of {@link ApiDistribution}. */
export interface ApiDistributionProps {
  /** Default origin: chat completions, models, and every other path (streaming Function URL). */
  readonly chatUrl: IFunctionUrl;
  /** Origin for {@link EMBEDDINGS_PATH_PATTERN}, {@link IMAGES_PATH_PATTERN} and {@link GEMINI_EMBED_PATH_PATTERNS} (buffered Function URL). */
  readonly embeddingsUrl: IFunctionUrl;
  /**
   * Seconds CloudFront waits for the first byte, and then between bytes, from the origin. Default 60,
   * the most allowed without a quota increase (CloudFront docs, "Response timeout"; up to 180 on
   * request). Time to first token on reasoning models can pass CloudFront's 30 s default; a stream that
   * goes quiet longer than this is cut, so the chat handler should send SSE comments while it waits.
   */
  readonly originReadTimeoutSeconds?: number;
  /**
   * The origin secret CloudFront adds to every request to a function as `x-origin-verify` (a dynamic
   * reference, see OriginSecret). The functions refuse requests without it.
   */
  readonly originSecretHeaderValue?: string;
  /** A custom domain (its certificate enforces TLS 1.2 for viewers). Default: `*.cloudfront.net` only. */
  readonly domain?: CustomDomain;
  /** Bucket for CloudFront's standard access logs (prefix `cloudfront/`). Default: no access logs. */
  readonly logBucket?: IBucket;
  /** ARN of a WAF web ACL (scope CLOUDFRONT) to attach. Default: none. */
  readonly webAclArn?: string;
  /**
   * The dashboard (lib/constructs/site.ts `Site.behavior`). When given, it is the default behaviour
   * (the page at `/`, index.html as root object) and the chat function is NOT the default: route
   * {@link API_PATH_PATTERN} to it with `addFunctionBehaviour`, after the other function paths.
   */
  readonly site?: BehaviorOptions;
}

/**
 * One base URL for the whole API. An OpenAI SDK has ONE `baseURL`, but chat (streaming) and embeddings
 * (buffered) are two functions with two Function URLs; a CloudFront distribution routes by path:
 * `/v1/embeddings*`, `/v1/images/*` and the Gemini API's embeddings methods to the embeddings (buffered) URL, everything else to the chat URL. CloudFront passes Function
 * URL response streams through as they arrive (it does not buffer non-cached responses).
 *
 * Every behaviour: all methods allowed (POST, and OPTIONS for CORS preflight, answered by the Function
 * URL), caching disabled (each completion is unique and billed), every viewer header, cookie and query
 * string forwarded except Host (a Function URL routes on its own Host: forwarding the viewer's gives
 * 403). `Authorization` is among them, GET included (`/v1/models`): a custom origin request policy may
 * not list it, but with caching off the managed AllViewer/AllViewerExceptHostHeader policies forward it
 * (AWS Knowledge Center, "cloudfront-authorization-header"). Compression off (gzip would buffer SSE),
 * HTTPS only (a redirect would turn a POST into a GET).
 * Origin access: the Function URLs are public (`authType: NONE`: the API key is the credential, and
 * OAC for Lambda needs SigV4-signed bodies, which OpenAI clients do not send), but every request
 * CloudFront forwards carries the stack's origin secret (`x-origin-verify`) and the functions refuse
 * any request without it (403): CloudFront, and its WAF when attached, is the only way in.
 */
export class ApiDistribution extends Construct {
  /** The distribution; `https://<distributionDomainName>/v1` is the clients' base URL. */
  readonly distribution: Distribution;

  /** The behaviour every function origin gets: see the class comment. */
  private readonly functionBehaviour: (url: IFunctionUrl) => BehaviorOptions;

  /** The viewer-request function that hands the origin the viewer's address, made on first use. */
  private viewerAddressFunction: CloudFrontFunction | undefined;

  constructor(scope: Construct, id: string, props: ApiDistributionProps) {
    super(scope, id);
    const readTimeout = Duration.seconds(props.originReadTimeoutSeconds ?? DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS);
    const customHeaders = props.originSecretHeaderValue === undefined ? undefined : { [ORIGIN_SECRET_HEADER]: props.originSecretHeaderValue };
    this.functionBehaviour = (url: IFunctionUrl): BehaviorOptions => ({
      origin: new FunctionUrlOrigin(url, { readTimeout, ...(customHeaders ? { customHeaders } : {}) }),
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      compress: false,
    });
    // One origin for the buffered function, shared by its paths.
    const buffered = this.functionBehaviour(props.embeddingsUrl);
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'modelmux: one base URL for chat (streaming) and embeddings (buffered)',
      defaultBehavior: props.site ?? this.functionBehaviour(props.chatUrl),
      ...(props.site ? { defaultRootObject: 'index.html' } : {}),
      additionalBehaviors: {
        [EMBEDDINGS_PATH_PATTERN]: buffered,
        [IMAGES_PATH_PATTERN]: buffered,
        ...Object.fromEntries(GEMINI_EMBED_PATH_PATTERNS.map((p) => [p, buffered])),
      },
      httpVersion: HttpVersion.HTTP2_AND_3,
      // No fixed cost whatever the class; ALL gives every client its nearest edge.
      priceClass: PriceClass.PRICE_CLASS_ALL,
      // With a custom domain, TLS 1.2 at least for viewers. CloudFront's default *.cloudfront.net
      // certificate always allows TLS 1.0, whatever is set (CloudFront docs, "Supported protocols and ciphers").
      ...(props.domain
        ? { domainNames: [props.domain.domainName], certificate: props.domain.certificate, minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021 }
        : {}),
      ...(props.logBucket ? { enableLogging: true, logBucket: props.logBucket, logFilePrefix: 'cloudfront/' } : {}),
      ...(props.webAclArn ? { webAclId: props.webAclArn } : {}),
    });
    props.domain?.addAliasRecords(this.distribution);
    this.acknowledgeNagFindings(props);
  }

  /**
   * Routes `pathPattern` (or several, sharing one origin) to another function's URL with the same
   * behaviour as chat and embeddings (origin secret header included), e.g. the account API's paths.
   * With `viewerAddress`, a viewer-request CloudFront Function also sets {@link VIEWER_ADDRESS_HEADER}
   * to the viewer's IP address (see {@link viewerAddress}).
   */
  addFunctionBehaviour(pathPattern: string | readonly string[], url: IFunctionUrl, opts: { viewerAddress?: boolean } = {}): void {
    const { origin, ...options } = this.functionBehaviour(url);
    const functionAssociations = opts.viewerAddress === true ? [{ function: this.viewerAddress(), eventType: FunctionEventType.VIEWER_REQUEST }] : undefined;
    for (const p of typeof pathPattern === 'string' ? [pathPattern] : pathPattern)
      this.distribution.addBehavior(p, origin, functionAssociations ? { ...options, functionAssociations } : options);
  }

  /**
   * The CloudFront Function (viewer request) that sets {@link VIEWER_ADDRESS_HEADER} to `event.viewer.ip`,
   * the viewer's IPv4 or IPv6 address (CloudFront Developer Guide, "CloudFront Functions event
   * structure"; the pattern of its example "Add a True-Client-IP header to the request"), replacing any
   * value the client sent. A header a viewer-request function sets is forwarded like the viewer's own
   * (AllViewerExceptHostHeader). Why not `CloudFront-Viewer-Address`: functions/shared/account-api/client-address.ts.
   * One function for the distribution (CloudFront Functions: $0.10 per million invocations, on the
   * account paths only).
   */
  private viewerAddress(): CloudFrontFunction {
    this.viewerAddressFunction ??= new CloudFrontFunction(this, 'ViewerAddress', {
      comment: `Sets ${VIEWER_ADDRESS_HEADER} to the viewer's IP address (the account API's sign-up limit per client network)`,
      runtime: FunctionRuntime.JS_2_0,
      code: FunctionCode.fromInline(
        ['function handler(event) {', `  event.request.headers['${VIEWER_ADDRESS_HEADER}'] = { value: event.viewer.ip };`, '  return event.request;', '}'].join(
          '\n',
        ),
      ),
    });
    return this.viewerAddressFunction;
  }

  /** cdk-nag AwsSolutions findings this distribution answers by design, each with its reason. */
  private acknowledgeNagFindings(props: ApiDistributionProps): void {
    const acknowledge = (id: string, reason: string): void => Validations.of(this.distribution).acknowledge({ id: `AwsSolutions::AwsSolutions-${id}`, reason });
    acknowledge('CFR1', 'A public API for clients anywhere: no country is refused by default (add a geo restriction or a WAF rule if your terms require one).');
    if (props.domain === undefined) {
      acknowledge(
        'CFR4',
        'Without a custom domain CloudFront serves its default *.cloudfront.net certificate, whose policy allows TLS 1.0 and cannot be changed; deploy with -c domainName=… to enforce TLS 1.2 (TLSv1.2_2021).',
      );
    }
    if (props.webAclArn === undefined) {
      acknowledge(
        'CFR2',
        'No WAF here: it was turned off (-c waf=false), or the stack is outside us-east-1, where a CloudFront web ACL cannot be created (attach one made there with -c wafWebAclArn=…). API keys, per-key rate limits and the origin secret still guard the API.',
      );
    }
    if (props.logBucket === undefined) acknowledge('CFR3', 'Access logs were turned off for this distribution by its owner.');
  }
}
