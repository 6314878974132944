import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { securityHeaders } from '../../web/security-headers';
import { isApiRouteWithoutV1, writeWrongPath } from './wrong-path';

/**
 * The dashboard's static files for `npm start`, standing in for CloudFront's default behaviour (the
 * private S3 bucket): every path except `/v1/…` and `/config.json` (which go to the functions, as
 * CloudFront's API behaviours send them) is a file of the built site (web/dist), `/` being
 * index.html. Every answer carries the same security headers as the CloudFront response headers
 * policy (web/security-headers.ts), so the page runs locally under the CSP it gets in AWS.
 */

/** True for paths CloudFront sends to the functions rather than to the site bucket. */
export function isApiPath(path: string): boolean {
  // The Gemini API's routes (docs/providers.md §10) are API paths too: `/v1beta/…` and `/models/{m}:{method}`.
  return path.startsWith('/v1/') || path.startsWith('/v1beta/') || path.startsWith('/models/') || path === '/config.json';
}

/** Options of {@link createStaticSite}. */
export interface StaticSiteOptions {
  /** The built site (web/dist). */
  root: string;
  /** Cognito's JSON API endpoint the page calls (CSP connect-src). */
  cognitoEndpoint: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** Cache policy per file: hashed names are immutable; index.html is revalidated every time. */
export function cacheControlFor(file: string): string {
  if (file === 'index.html') return 'no-cache';
  return /-[A-Z0-9]{8}\.(js|css|map)$/.test(file) ? 'public, max-age=31536000, immutable' : 'public, max-age=3600';
}

/**
 * A request handler that answers site paths and returns true, or returns false for API paths (the
 * caller then passes the request to the functions). GET and HEAD only (a JSON 405 otherwise, and a JSON
 * 404 for an API route without its `/v1`: wrong-path.ts); a name with a
 * `..`, a backslash, an encoded slash or a NUL is 404, never a file outside `root`.
 */
export function createStaticSite(opts: StaticSiteOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const root = resolve(opts.root);
  const headers = securityHeaders({ cognitoEndpoint: opts.cognitoEndpoint, https: false });
  return (req, res) => {
    const target = req.url ?? '/';
    const path = target.split('?')[0] ?? '/';
    if (isApiPath(path)) return false;
    req.resume();
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    // An API client on a site path (no `/v1`, or a POST) gets a JSON error naming the base URL (wrong-path.ts).
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isApiRouteWithoutV1(path)) {
      writeWrongPath(req, res, path);
      return true;
    }
    void serveFile(root, path, req.method === 'HEAD', res);
    return true;
  };
}

async function serveFile(root: string, path: string, headOnly: boolean, res: ServerResponse): Promise<void> {
  const name = fileName(path);
  const file = name === undefined ? undefined : join(root, name);
  if (name === undefined || file === undefined || !file.startsWith(root + sep)) {
    notFound(res);
    return;
  }
  let body: Buffer;
  try {
    body = await readFile(file);
  } catch {
    if (name === 'index.html') {
      res
        .writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
        .end('The dashboard is not built: run `npm run build:web` (npm start does it).\n');
    } else {
      notFound(res);
    }
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES[extname(name)] ?? 'application/octet-stream',
    'content-length': body.length,
    'cache-control': cacheControlFor(name),
  });
  res.end(headOnly ? undefined : body);
}

/** The file a URL path names (`/` → index.html), or undefined when it may not name one. */
function fileName(path: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  if (decoded === '/' || decoded === '') return 'index.html';
  const name = decoded.replace(/^\/+/, '');
  if (name.includes('..') || name.includes('\\') || name.includes('\0') || /%2f/i.test(path)) return undefined;
  return name;
}

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end('Not found\n');
}
