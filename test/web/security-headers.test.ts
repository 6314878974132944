import { describe, expect, it } from 'vitest';
import { cognitoSource, contentSecurityPolicy, securityHeaders } from '../../web/security-headers';

describe('dashboard security headers', () => {
  it('allow scripts, styles and fonts from the site only, and connections to the site and Cognito only', () => {
    const csp = contentSecurityPolicy({ cognitoEndpoint: 'https://cognito-idp.eu-west-1.amazonaws.com/', https: true });
    const directives = Object.fromEntries(csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives).toEqual({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'img-src': "'self' data:",
      'font-src': "'self'",
      'manifest-src': "'self'",
      'connect-src': "'self' https://cognito-idp.eu-west-1.amazonaws.com",
      'base-uri': "'none'",
      'form-action': "'self'",
      'frame-ancestors': "'none'",
      'object-src': "'none'",
      'require-trusted-types-for': "'script'",
      'trusted-types': "'none'",
      'upgrade-insecure-requests': '',
    });
  });

  it('upgrades requests only over HTTPS (locally it would break every request)', () => {
    expect(contentSecurityPolicy({ cognitoEndpoint: 'http://127.0.0.1:9229', https: false })).not.toContain('upgrade-insecure-requests');
  });

  it('reduce the Cognito endpoint to its origin, and pass a CDK token through untouched', () => {
    expect(cognitoSource('http://127.0.0.1:9229/')).toBe('http://127.0.0.1:9229');
    expect(cognitoSource('https://cognito-idp.us-east-1.amazonaws.com/some/path')).toBe('https://cognito-idp.us-east-1.amazonaws.com');
    expect(cognitoSource('https://cognito-idp.${Token[AWS.Region.8]}.amazonaws.com')).toBe('https://cognito-idp.${Token[AWS.Region.8]}.amazonaws.com');
  });

  it('send the usual hardening headers', () => {
    expect(securityHeaders({ cognitoEndpoint: 'http://127.0.0.1:1', https: false })).toMatchObject({
      'Strict-Transport-Security': 'max-age=63072000; includeSubDomains; preload',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'X-XSS-Protection': '0',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
    });
  });
});
