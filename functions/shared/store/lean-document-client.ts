/**
 * The store's document client: every store command (store/dynamo-commands.ts: Get, Put, Update, Delete,
 * Query, Scan, BatchGet, TransactWrite) goes over DynamoDB's JSON protocol (aws/aws-json.ts), about
 * half the CPU per call of lib-dynamodb over the SDK on Node 24, and with no SDK client in the Lambda
 * bundles (docs/dynamodb-client.md). Anything else (an SDK command: table operations of the local
 * tools and the admin CLI, a test's lib-dynamodb command), and every call when there is no JSON path
 * (no environment credentials: the admin CLI on a profile), goes through lib-dynamodb's client, loaded
 * with `import()` on first such use (store/sdk-document-client.ts): a Lambda function never loads it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Command as SdkCommand, MetadataBearer } from '@smithy/types';
import type { AwsJsonClient } from '../aws/aws-json';
import { StoreCommand } from './dynamo-commands';
import type { SdkDocumentClientOptions } from './sdk-document-client';

/** A middleware as the SDK's `initialize` step sees it (what tests and SDK_CLIENT_HOOK's callers add). */
type Middleware = (
  next: (args: { input: object }) => Promise<{ output: object }>,
  context: { clientName: string; commandName: string },
) => (args: { input: object }) => Promise<{ output: object }>;
type MiddlewareOptions = { step?: string; name?: string } & Record<string, unknown>;

/** Options of a command's send (the SDK's `HttpHandlerOptions` subset the store uses). */
export interface SendOptions {
  abortSignal?: AbortSignal;
}

type SdkSend = DynamoDBDocumentClient['send'];

/**
 * The SDK path's module. Its specifier is not a literal, so esbuild leaves it out of the Lambda bundles
 * (and it is never reached there: the functions send store commands only, with environment credentials).
 */
const SDK_DOCUMENT_CLIENT_MODULE: string = './sdk-document-client';

/** The store's client (store/dynamo.ts makes it); `middlewareStack` reaches both of its paths. */
export class StoreClient {
  private readonly middlewares: Array<{ mw: Middleware; opts?: MiddlewareOptions }> = [];
  private sdk: Promise<DynamoDBDocumentClient> | undefined;
  private sdkMade: DynamoDBDocumentClient | undefined;

  /**
   * The part of an SDK client's middleware stack tests and tools use: an `initialize` middleware added
   * here sees every call of either path (the JSON path names the command `<Operation>Command`, e.g.
   * `PutItemCommand`, with the marshalled input, as the SDK's low-level client does).
   */
  readonly middlewareStack = {
    add: (mw: Middleware, opts?: MiddlewareOptions): void => {
      this.middlewares.push({ mw, opts });
      this.sdkMade?.middlewareStack.add(mw as never, opts as never);
    },
    remove: (name: string): boolean => {
      const at = this.middlewares.findIndex((m) => m.opts?.name === name);
      if (at >= 0) this.middlewares.splice(at, 1);
      const removed = this.sdkMade?.middlewareStack.remove(name) ?? false;
      return at >= 0 || removed;
    },
  };

  /**
   * @param json the JSON-protocol client, or undefined when every call must go through the SDK.
   * @param sdkOptions how to make the SDK client when it is first needed.
   */
  constructor(
    private readonly json: AwsJsonClient | undefined,
    private readonly sdkOptions: SdkDocumentClientOptions,
  ) {}

  /**
   * Sends a store command (its lib-dynamodb-shaped output), or an SDK command through the SDK path.
   * @throws the SDK's exception classes (`ConditionalCheckFailedException`, …), `TimeoutError`, socket errors.
   */
  send<O extends object>(command: StoreCommand<object, O>, options?: SendOptions): Promise<O>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an SDK command of any client configuration
  send<I extends object, O extends MetadataBearer>(command: SdkCommand<any, I, any, O, any>, options?: SendOptions): Promise<O>;
  send(command: unknown, options?: SendOptions): Promise<unknown> {
    if (command instanceof StoreCommand && this.json !== undefined) return this.sendJson(command, this.json, options?.abortSignal);
    return this.sdkClient().then(async (sdk) => {
      if (!(command instanceof StoreCommand)) return sdk.send(command as Parameters<SdkSend>[0], options);
      const { toSdkCommand } = (await import(SDK_DOCUMENT_CLIENT_MODULE)) as typeof import('./sdk-document-client');
      return sdk.send(toSdkCommand(command), options);
    });
  }

  /** Closes its connections (both paths). */
  destroy(): void {
    this.json?.destroy();
    this.sdkMade?.destroy();
  }

  private sendJson(command: StoreCommand<object, object>, json: AwsJsonClient, abortSignal?: AbortSignal): Promise<unknown> {
    const base = async (args: { input: object }): Promise<{ output: object }> => {
      const { body, $metadata } = await json.call(command.operation, args.input, abortSignal);
      return { output: { ...command.output(body), $metadata } };
    };
    const context = { clientName: 'DynamoDBClient', commandName: `${command.operation}Command` };
    const handler = this.middlewares.reduceRight((next, { mw, opts }) => ((opts?.step ?? 'initialize') === 'initialize' ? mw(next, context) : next), base);
    return handler({ input: command.wireInput() }).then((r) => r.output);
  }

  private sdkClient(): Promise<DynamoDBDocumentClient> {
    this.sdk ??= (import(SDK_DOCUMENT_CLIENT_MODULE) as Promise<typeof import('./sdk-document-client')>).then(
      ({ createSdkDocumentClient }) => {
        const client = createSdkDocumentClient(this.sdkOptions);
        for (const { mw, opts } of this.middlewares) client.middlewareStack.add(mw as never, opts as never);
        this.sdkMade = client;
        return client;
      },
      (err: unknown) => {
        this.sdk = undefined;
        throw new Error('This DynamoDB call needs the AWS SDK client, which the Lambda bundles leave out: send a store command (store/dynamo-commands.ts)', {
          cause: err,
        });
      },
    );
    return this.sdk;
  }
}
