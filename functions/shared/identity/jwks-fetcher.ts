/**
 * Fetches a JWKS document for `aws-jwt-verify` with Node's `fetch`, so the same verifier reads AWS's
 * `https://cognito-idp…/.well-known/jwks.json` and the local emulator's `http://127.0.0.1:…` one (the
 * library's own fetcher speaks HTTPS only). Bounded: 3 s per fetch.
 */
import { FetchError, NonRetryableFetchError } from 'aws-jwt-verify/error';
import type { Fetcher } from 'aws-jwt-verify/https';

/** Longest wait for the JWKS document, ms. */
const JWKS_FETCH_TIMEOUT_MS = 3_000;

/** The fetcher; a non-200 answer is not retried, a network failure is (once, by the library). */
export const jwksFetcher: Fetcher = {
  async fetch(uri: string): Promise<ArrayBuffer> {
    let response: Response;
    try {
      response = await fetch(uri, { signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS) });
    } catch (err) {
      throw new FetchError(uri, err instanceof Error ? err.message : String(err));
    }
    if (response.status !== 200) throw new NonRetryableFetchError(uri, `Status code is ${response.status}, expected 200`);
    return response.arrayBuffer();
  },
};
