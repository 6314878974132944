/**
 * The public base URL of this deployment (scheme and host, no trailing slash, no `/v1`), for messages
 * that send people somewhere real: "create a key in the dashboard at <base>/".
 *
 * `PUBLIC_BASE_URL` (e.g. `https://api.example.com`) when set — behind CloudFront the request's Host is
 * the Function URL's own, so a deployment sets it to its distribution or custom domain. Otherwise it is
 * derived from the request: `x-forwarded-host` (set by proxies) or `host`, with `x-forwarded-proto`, or
 * `http` for loopback hosts and `https` elsewhere.
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

/** The base URL people reach this deployment at, e.g. `https://api.example.com` (see the file comment). */
export function publicBaseUrl(req: Pick<GatewayRequest, 'headers'>): string {
  const fixed = configuredBaseUrl();
  if (fixed !== undefined) return fixed;
  const first = (v: string | undefined) => v?.split(',')[0]?.trim() || undefined;
  const host = first(req.headers['x-forwarded-host']) ?? first(req.headers.host);
  if (host === undefined || !/^[A-Za-z0-9.:[\]-]+$/.test(host)) return '';
  const loopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(host);
  const proto = first(req.headers['x-forwarded-proto']) === 'http' || loopback ? 'http' : 'https';
  return `${proto}://${host}`;
}

/** Where people manage their account and keys: the dashboard at the site root, e.g. `https://api.example.com/`. */
export function dashboardUrl(req: Pick<GatewayRequest, 'headers'>): string {
  const base = publicBaseUrl(req);
  return base === '' ? 'the modelmux dashboard' : `${base}/`;
}
