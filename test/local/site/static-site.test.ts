import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFunctionUrlServer, listen } from '../../../local/function-url/index.js';
import { cacheControlFor, createStaticSite, isApiPath } from '../../../local/site/static-site';
import { buildWebSync, type WebBuildResult } from '../../../web/build';
import { securityHeaders } from '../../../web/security-headers';

/**
 * `npm start`'s stand-in for CloudFront's default behaviour: the built dashboard on the same port as
 * the functions, with the CloudFront headers, over real HTTP on loopback. A plain BUFFERED function
 * answers every API path, so the test sees which requests reach it.
 */

const COGNITO = 'http://127.0.0.1:9229/';
let dir: string;
let built: WebBuildResult;
let server: Awaited<ReturnType<typeof listen>>;
let missing: Awaited<ReturnType<typeof listen>>;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with the path sent exactly as given (fetch would normalise `..`). */
function raw(base: string, path: string, method = 'GET'): Promise<Raw> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const fn = async (event: { rawPath: string }) => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ function: event.rawPath }),
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'site-test-'));
  built = buildWebSync(join(dir, 'dist'));
  const routes = [{ match: () => true, handler: fn, invokeMode: 'BUFFERED' as const, functionName: 'api' }];
  server = await listen(createFunctionUrlServer(routes, { intercept: createStaticSite({ root: built.outDir, cognitoEndpoint: COGNITO }) }));
  missing = await listen(createFunctionUrlServer(routes, { intercept: createStaticSite({ root: join(dir, 'nothing'), cognitoEndpoint: COGNITO }) }));
}, 60_000);

afterAll(async () => {
  await server?.close();
  await missing?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('local dashboard server', () => {
  it('serves index.html at / with every header of the CloudFront policy and no-cache', async () => {
    const res = await raw(server.url, '/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    for (const [name, value] of Object.entries(securityHeaders({ cognitoEndpoint: COGNITO, https: false }))) {
      expect(res.headers[name.toLowerCase()], name).toBe(value);
    }
    expect(res.headers['content-security-policy']).toContain("connect-src 'self' http://127.0.0.1:9229;");
    expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(res.body).toContain(`<script type="module" src="/${built.js}"></script>`);
  });

  it('serves the hashed bundle as JavaScript, cached for a year, and answers HEAD without a body', async () => {
    const res = await raw(server.url, `/${built.js}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(Number(res.headers['content-length'])).toBe(built.jsBytes);
    const head = await raw(server.url, `/${built.css}`, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(head.body).toBe('');
  });

  it('passes /v1/… and /config.json to the functions, untouched by the site', async () => {
    for (const path of ['/v1/models', '/v1/account', '/config.json', '/v1/keys/abc?x=1']) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ function: path.split('?')[0] });
      expect(res.headers['content-security-policy']).toBeUndefined();
    }
  });

  it('never serves a file outside the site, however the path is written', async () => {
    for (const path of [
      '/../package.json',
      '/%2e%2e/package.json',
      '/..%2fpackage.json',
      '/a%2f..%2f..%2fpackage.json',
      '/..\\package.json',
      '/%00',
      '/%E0%A4%A',
    ]) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(404);
      expect(res.body).not.toContain('"name"');
    }
  });

  it('answers 404 for a missing file, 405 for a write, and 503 naming the build command when unbuilt', async () => {
    expect((await raw(server.url, '/nope.js')).status).toBe(404);
    const post = await raw(server.url, '/', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    const unbuilt = await raw(missing.url, '/');
    expect(unbuilt.status).toBe(503);
    expect(unbuilt.body).toContain('npm run build:web');
  });
});

describe('site helpers', () => {
  it('sends exactly /v1/… and /config.json to the functions, as the CloudFront behaviours do', () => {
    expect(isApiPath('/v1/chat/completions')).toBe(true);
    expect(isApiPath('/config.json')).toBe(true);
    expect(isApiPath('/')).toBe(false);
    expect(isApiPath('/v1')).toBe(false);
    expect(isApiPath('/config.jsonx')).toBe(false);
  });

  it('caches hashed files for a year and revalidates index.html', () => {
    expect(cacheControlFor('index.html')).toBe('no-cache');
    expect(cacheControlFor('app-EE7ORXHL.js')).toBe('public, max-age=31536000, immutable');
    expect(cacheControlFor('favicon.svg')).toBe('public, max-age=3600');
  });
});
