/**
 * Stands in for `@smithy/core/event-streams` in the Lambda bundles (lib/constructs/gateway-function.ts
 * aliases it in the esbuild step only). The SDK's HTTP protocols load that module with `import()` only
 * for operations that send or receive an event stream, and none of the clients in the bundles has one
 * (DynamoDB, Secrets Manager; SQS and KMS are bundled apart). Bundled, that dynamic import made esbuild
 * wrap ~160 SDK modules in lazy initializers that all run at INIT anyway, and it added ~15 KB: `npm run
 * bench`, "Bundles and cold start". Should a future client need event streams, this fails loudly.
 */
const unsupported = (): never => {
  throw new Error('AWS SDK event streams are not bundled in modelmux Lambda functions (functions/shared/store/no-event-streams.ts)');
};

/** Never constructed: see the module comment. @throws Error always. */
export class EventStreamSerde {
  constructor() {
    unsupported();
  }
}

/** Never called: see the module comment. @throws Error always. */
export const eventStreamSerdeProvider = unsupported;
