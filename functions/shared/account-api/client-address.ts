/**
 * The client's IP address as the account function can know it, for the per-network limit of free
 * grants (accounts/signup-network.ts).
 *
 * Behind CloudFront a Function URL's `sourceIp` is the CloudFront server that forwarded the request,
 * so the viewer's address comes in {@link VIEWER_ADDRESS_HEADER}, which the distribution's
 * viewer-request function sets from `event.viewer.ip` on the account paths, overwriting whatever the
 * client sent (lib/constructs/api-distribution.ts). It is trusted only when the origin check is on
 * (`ORIGIN_SECRET_ARN` set: edge/origin-secret.ts has refused, with 403, any request that did not come
 * through the distribution before a route runs). Without the check (no CloudFront, `npm start`) anyone
 * could send the header, so `sourceIp` is used.
 *
 * Why not CloudFront's own `CloudFront-Viewer-Address` header (CloudFront Developer Guide, "Add
 * CloudFront request headers": `ip:port` of the viewer): CloudFront adds it only when an origin request
 * policy lists it, and a policy that lists CloudFront headers must also forward every viewer header
 * with Host (`allViewerAndWhitelistCloudFront`; CloudFront API Reference,
 * OriginRequestPolicyHeadersConfig), which a Function URL refuses. The function URLs' managed
 * AllViewerExceptHostHeader policy forwards viewer headers only, and a viewer-request function's
 * header counts as one.
 */
import { config } from '../config/env';
import { VIEWER_ADDRESS_HEADER } from '../config/stack-contract';
import type { GatewayRequest } from '../http/types';

/**
 * The client's IP address (text as received, e.g. `203.0.113.9` or `2001:db8::1`), or undefined when
 * behind CloudFront the viewer header is missing (never CloudFront's own address).
 * @throws ConfigError when a setting is unusable.
 */
export function clientAddress(req: Pick<GatewayRequest, 'headers' | 'sourceIp'>): string | undefined {
  if (config().ORIGIN_SECRET_ARN !== undefined) {
    const viewer = req.headers[VIEWER_ADDRESS_HEADER]?.trim();
    return viewer === undefined || viewer === '' ? undefined : viewer;
  }
  return req.sourceIp;
}
