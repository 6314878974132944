/**
 * The public base URL of this deployment (scheme and host, no trailing slash, no `/v1`), for messages
 * that send people somewhere real: "create a key in the dashboard at <base>/".
 *
 * `PUBLIC_BASE_URL` (e.g. `https://api.example.com`) when set: the stack sets it from `publicBaseUrl`
 * or the custom domain. Otherwise no inbound Host is ever echoed: behind CloudFront the request's Host
 * is the Function URL's own, and one keyless request would reveal the URL that bypasses the WAF (and a
 * client-chosen Host would let anyone put their own link into our messages). The one exception is a
 * loopback host (`npm start` on this machine), which reveals nothing.
 */
import { config } from '../config/env';
import type { GatewayRequest } from './types';

/**
 * `PUBLIC_BASE_URL` from the container's config (validated there as an http(s) URL), without trailing
 * slashes or `/v1`.
 * @throws ConfigError naming the variable when it is set but not an http(s) URL.
 */
function configuredBaseUrl(): string | undefined {
  return config().PUBLIC_BASE_URL?.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/**
 * The base URL people reach this deployment at, e.g. `https://api.example.com`: `PUBLIC_BASE_URL`, or
 * `http://<loopback host>` for a local request, else '' (messages then name no host; see the file comment).
 */
export function publicBaseUrl(req: Pick<GatewayRequest, 'headers'>): string {
  const fixed = configuredBaseUrl();
  if (fixed !== undefined) return fixed;
  const first = (v: string | undefined) => v?.split(',')[0]?.trim() || undefined;
  const host = first(req.headers['x-forwarded-host']) ?? first(req.headers.host);
  const loopback = host !== undefined && /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(host);
  return loopback ? `http://${host}` : '';
}

/** Where people manage their account and keys: the dashboard at the site root, e.g. `https://api.example.com/`. */
export function dashboardUrl(req: Pick<GatewayRequest, 'headers'>): string {
  const base = publicBaseUrl(req);
  return base === '' ? 'the modelmux dashboard' : `${base}/`;
}
