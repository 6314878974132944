import { constants, createGzip, gzipSync, type Gzip, type ZlibOptions } from 'node:zlib';
import preferredEncodings from 'negotiator/lib/encoding';

/**
 * gzip at the origin, for the client that asks for it: what CloudFront bills as bytes out is what the
 * Function URL sends (a 500-token stream is ~104 KB of very repetitive SSE).
 *
 * Why the origin and not CloudFront: the API behaviour (lib/constructs/api-distribution.ts) uses
 * `CachingDisabled` (`EnableAcceptEncodingGzip` and `…Brotli` both false) with `compress: false`, and
 * CloudFront compresses only for a behaviour with `Compress` and those flags on (Developer Guide,
 * "Serve compressed files"). With both flags false "CloudFront treats the Accept-Encoding header the
 * same as any other HTTP header in the viewer request" (API Reference,
 * ParametersInCacheKeyAndForwardedToOrigin, EnableAcceptEncodingGzip), and the
 * AllViewerExceptHostHeader origin request policy forwards every viewer header but Host: the viewer's
 * own Accept-Encoding reaches the function. When the origin's response carries Content-Encoding,
 * CloudFront sends it to the viewer as it is and does not compress it again ("Serve compressed
 * files", How CloudFront compression works, step 4): the origin's gzip is what is billed.
 *
 * Clients: the openai Node SDK (fetch/undici: `br, gzip, deflate` over HTTPS) and Python SDK (httpx:
 * `gzip, deflate`) send Accept-Encoding and decode a gzip stream as it arrives; curl without
 * `--compressed` sends none and gets identity.
 */

/**
 * The zlib level of every gzip the gateway writes. Measured (`npm run bench`, "gzip of a 500-chunk
 * stream"; 2026-11-24 on this repository's 2-core machine): with a sync flush after every event, the
 * flush framing dominates and level 6 or 9 saves almost nothing over level 1 on a stream (106.3 KB ->
 * 6.4 KB at level 1, 6.35 KB at 6; ~19-20 µs CPU per event either way, ~12 µs over identity), while on
 * a buffered body level 1 is ~3x cheaper (32.7 KB of embedding floats: 354 µs at level 1 vs 1,024 µs at
 * 6, for 2.14:1 vs 2.24:1).
 */
export const GZIP_LEVEL = 1;

/**
 * zlib options: the level above; window and memory at zlib's defaults (windowBits 15, memLevel 8:
 * ~256 KB per stream): a smaller window (12) saves memory but loses ~7% of the stream's bytes on
 * varied text, and memLevel 9 changes nothing measurable.
 */
const GZIP_OPTIONS: ZlibOptions = { level: GZIP_LEVEL };

/** A buffered answer below this many bytes (uncompressed) is sent as it is: gzip would save nothing worth the CPU. */
export const MIN_GZIP_BYTES = 1024;

/** Headers of a gzip-encoded response. `vary` tells any cache the body depends on Accept-Encoding. */
export const GZIP_HEADERS: Readonly<Record<string, string>> = { 'content-encoding': 'gzip', vary: 'accept-encoding' };

/** Headers of a negotiable response sent as identity (it could have been gzip for another Accept-Encoding). */
export const IDENTITY_HEADERS: Readonly<Record<string, string>> = { vary: 'accept-encoding' };

/**
 * Does the request's `accept-encoding` take gzip over identity? By RFC 9110 §12.5.3 q-values
 * (negotiator): `gzip`, `br, gzip, deflate`, `*` → yes; absent, `identity`, `gzip;q=0`, `br` → no;
 * `gzip;q=0.5, identity` → no (identity is preferred). A header that cannot be parsed → no.
 * @param headers lower-case header names (Function URL events).
 */
export function acceptsGzip(headers: Readonly<Record<string, string | undefined>>): boolean {
  const header = headers['accept-encoding'];
  if (header === undefined || header === '') return false;
  try {
    return preferredEncodings(header, ['gzip', 'identity'], ['gzip', 'identity'])[0] === 'gzip';
  } catch {
    return false;
  }
}

/**
 * A streaming gzip (one gzip member) that flushes every write: each `write()` is followed by a
 * Z_SYNC_FLUSH, so the bytes of every SSE event (or keep-alive comment) leave at once and decode on
 * their own at the client; `end()` writes the final block and the trailer (CRC-32, length).
 */
export function createEventGzip(): Gzip {
  return createGzip({ ...GZIP_OPTIONS, flush: constants.Z_SYNC_FLUSH });
}

/** A whole body as one gzip member. */
export function gzipText(text: string): Buffer {
  return gzipSync(text, GZIP_OPTIONS);
}

/** A buffered body, gzip'd when the client accepts it and it is at least {@link MIN_GZIP_BYTES}. */
export interface EncodedBody {
  body: string | Buffer;
  headers: Readonly<Record<string, string>>;
}

/**
 * The bytes to send for a buffered `text`, and the headers that go with them.
 * @param gzip {@link acceptsGzip} of the request.
 */
export function encodeBody(text: string, gzip: boolean): EncodedBody {
  if (!gzip || Buffer.byteLength(text, 'utf8') < MIN_GZIP_BYTES) return { body: text, headers: IDENTITY_HEADERS };
  return { body: gzipText(text), headers: GZIP_HEADERS };
}
