/**
 * The dashboard's response headers: a strict Content-Security-Policy and the usual security headers.
 * ONE definition, used by both the local server (local/site/static-site.ts) and the CloudFront
 * response headers policy (lib/constructs/site.ts), so `npm start` serves exactly what AWS serves.
 *
 * Dependency-free on purpose: it is imported by CDK code and by local code alike.
 *
 * The page has no inline script or style and no third-party origin: every script, style, image and
 * font comes from the site itself ('self'); the only other origin it talks to is Cognito's JSON API
 * (sign-in), so connect-src is 'self' plus that endpoint. Sources: MDN "Content-Security-Policy",
 * OWASP Secure Headers Project (recommended values), web.dev "Mitigate XSS with a strict CSP".
 */

/** Options of {@link contentSecurityPolicy} and {@link securityHeaders}. */
export interface SecurityHeaderOptions {
  /**
   * Cognito's JSON API endpoint the page calls, e.g. `https://cognito-idp.eu-west-1.amazonaws.com/`
   * or `http://127.0.0.1:9229/` locally. Only its origin (scheme, host, port) is used. May be a CDK
   * token string (the region of a stack); it is then used verbatim minus a trailing slash.
   */
  cognitoEndpoint: string;
  /**
   * The page is served over HTTPS (CloudFront): add `upgrade-insecure-requests`. Locally (plain
   * http on loopback) that directive would turn every request into an https one that cannot connect.
   */
  https: boolean;
}

/** The CSP source for the Cognito endpoint: its origin, no path (CSP sources are origins here). */
export function cognitoSource(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  // A CDK token (`${Token[AWS.Region.8]}`) must pass untouched: URL parsing would lower-case it.
  if (trimmed.includes('${')) return trimmed;
  // A plain URL: keep only the origin.
  try {
    const url = new URL(trimmed);
    if (url.origin !== 'null') return url.origin;
  } catch {
    /* token or partial string: fall through */
  }
  return trimmed;
}

/**
 * The Content-Security-Policy value.
 * - `default-src 'none'`: nothing loads unless listed below.
 * - scripts, styles, images, fonts, the manifest: the site itself only; no 'unsafe-inline' and no
 *   'unsafe-eval' (esbuild's bundle needs neither; SVG charts use attributes and classes, not style="").
 * - `connect-src 'self' <cognito>`: the account API (same origin) and Cognito.
 * - `require-trusted-types-for 'script'; trusted-types 'none'`: no string may ever reach an HTML
 *   sink (innerHTML and friends); the app renders through DOM APIs only.
 * - `frame-ancestors 'none'` (clickjacking), `base-uri 'none'`, `form-action 'self'`, `object-src 'none'`.
 */
export function contentSecurityPolicy(opts: SecurityHeaderOptions): string {
  const directives = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "manifest-src 'self'",
    `connect-src 'self' ${cognitoSource(opts.cognitoEndpoint)}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ];
  if (opts.https) directives.push('upgrade-insecure-requests');
  return directives.join('; ');
}

/**
 * The header set, structured as a CloudFront response headers policy takes it: the security headers
 * it knows by name, and the others as custom headers. Values are what both servers send.
 */
export interface SiteSecurityHeaders {
  contentSecurityPolicy: string;
  /** `Strict-Transport-Security`: two years, subdomains, preload-eligible (hstspreload.org's minimum is one year). */
  strictTransportSecurity: { maxAgeSeconds: number; includeSubdomains: boolean; preload: boolean };
  /** `X-Content-Type-Options: nosniff`. */
  contentTypeOptions: 'nosniff';
  /** `X-Frame-Options: DENY` (older browsers; frame-ancestors is the modern form). */
  frameOptions: 'DENY';
  /** `Referrer-Policy: no-referrer`: no page URL ever leaves the site. */
  referrerPolicy: 'no-referrer';
  /** `X-XSS-Protection: 0`: the legacy filter is itself an attack surface (OWASP); CSP replaces it. */
  xssProtection: '0';
  /** Headers a CloudFront policy sets as custom headers. */
  custom: Record<string, string>;
}

/** Every header, structured (see {@link SiteSecurityHeaders}). */
export function siteSecurityHeaders(opts: SecurityHeaderOptions): SiteSecurityHeaders {
  return {
    contentSecurityPolicy: contentSecurityPolicy(opts),
    strictTransportSecurity: { maxAgeSeconds: 63_072_000, includeSubdomains: true, preload: true },
    contentTypeOptions: 'nosniff',
    frameOptions: 'DENY',
    referrerPolicy: 'no-referrer',
    xssProtection: '0',
    custom: {
      'Permissions-Policy': 'accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), payment=(), usb=()',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'X-Permitted-Cross-Domain-Policies': 'none',
    },
  };
}

/** The same set as plain `name → value` HTTP headers (what the local server writes). */
export function securityHeaders(opts: SecurityHeaderOptions): Record<string, string> {
  const h = siteSecurityHeaders(opts);
  const sts = h.strictTransportSecurity;
  return {
    'Content-Security-Policy': h.contentSecurityPolicy,
    'Strict-Transport-Security': `max-age=${sts.maxAgeSeconds}${sts.includeSubdomains ? '; includeSubDomains' : ''}${sts.preload ? '; preload' : ''}`,
    'X-Content-Type-Options': h.contentTypeOptions,
    'X-Frame-Options': h.frameOptions,
    'Referrer-Policy': h.referrerPolicy,
    'X-XSS-Protection': h.xssProtection,
    ...h.custom,
  };
}
