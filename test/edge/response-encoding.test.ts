import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptsGzip, encodeBody, MIN_GZIP_BYTES } from '../../functions/shared/edge/response-encoding';

describe('acceptsGzip: Accept-Encoding by its q-values', () => {
  it.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['identity', false],
    ['gzip', true],
    ['GZIP', true],
    ['gzip, deflate', true], // httpx (openai Python SDK)
    ['br, gzip, deflate', true], // undici fetch over HTTPS (openai Node SDK)
    ['gzip, deflate, br, zstd', true], // Chrome
    ['*', true],
    ['*;q=0.5', true],
    ['gzip;q=0', false],
    ['gzip;q=0.0, deflate', false],
    ['*;q=0', false],
    ['br', false],
    ['deflate', false],
    ['gzip;q=0.5, identity', false], // identity preferred
    ['gzip;q=0.5, identity;q=0.4', true],
    ['identity;q=0, gzip', true],
    ['gzip ; q=1.0', true],
    ['gzip;q=abc', false], // a q that is not a number: not acceptable
    ['gzip;q', true], // a q without value is ignored (negotiator, as Express reads it)
  ])('%j -> %s', (header, expected) => {
    expect(acceptsGzip(header === undefined ? {} : { 'accept-encoding': header })).toBe(expected);
  });
});

describe('encodeBody', () => {
  const big = JSON.stringify({ data: Array.from({ length: 200 }, (_, i) => ({ index: i, value: 0.012345 * i })) });

  it('gzips a body of 1 KB or more when accepted, with content-encoding and vary', () => {
    const e = encodeBody(big, true);
    expect(e.headers).toEqual({ 'content-encoding': 'gzip', vary: 'accept-encoding' });
    expect(Buffer.isBuffer(e.body)).toBe(true);
    expect(gunzipSync(e.body as Buffer).toString('utf8')).toBe(big);
  });

  it('leaves a body under 1 KB, or any body when gzip is not accepted, as text (vary still set)', () => {
    const small = 'x'.repeat(MIN_GZIP_BYTES - 1);
    expect(encodeBody(small, true)).toEqual({ body: small, headers: { vary: 'accept-encoding' } });
    expect(encodeBody(big, false)).toEqual({ body: big, headers: { vary: 'accept-encoding' } });
  });

  it('counts bytes, not characters, against the 1 KB', () => {
    const text = 'é'.repeat(MIN_GZIP_BYTES / 2); // 512 characters, 1,024 bytes
    expect(Buffer.isBuffer(encodeBody(text, true).body)).toBe(true);
  });
});
