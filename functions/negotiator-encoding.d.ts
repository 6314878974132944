/**
 * Types for the one file of `negotiator` (jshttp, the parser behind Express's `req.acceptsEncodings`)
 * that modelmux bundles: `negotiator/lib/encoding.js`, Accept-Encoding only (3.6 KB minified, the
 * other three negotiators left out). `@types/negotiator` types the package's main class only.
 */
declare module 'negotiator/lib/encoding' {
  /**
   * The encodings of `provided` the header accepts (q > 0), best first: by q, then by `preferred`
   * on a tie. `identity` is implicitly acceptable unless the header refuses it (`identity;q=0`, or
   * `*;q=0` without an `identity` entry). An absent or empty header accepts `identity` only.
   * Lenient: a parameter without value is ignored, a q that is not a number refuses that entry.
   * @throws TypeError should `content-type`'s parser reject the header (callers treat that as identity).
   */
  function preferredEncodings(accept: string | undefined, provided?: readonly string[], preferred?: readonly string[]): string[];
  export default preferredEncodings;
}
