import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/**
 * The Lambda `context` object, shaped like the managed runtime's (aws-lambda-nodejs-runtime-interface-
 * client `src/context/context-builder.ts`): ids and names from the invoke, `memoryLimitInMB` as a
 * STRING (it comes from an environment variable), `getRemainingTimeInMillis()` = deadline - now
 * (not clamped: it goes negative once the deadline has passed).
 */

/** Per-function values that do not change between invocations ("the container"). */
export interface FunctionIdentity {
  functionName: string;
  /** Memory size, MB. */
  memoryMb: number;
  region: string;
  accountId: string;
  /** `/aws/lambda/<name>`. */
  logGroupName: string;
  /** One per container in Lambda; one per server here. */
  logStreamName: string;
}

/** Builds the identity the way Lambda names things for `functionName`. */
export function functionIdentity(functionName: string, memoryMb: number, region: string, accountId: string): FunctionIdentity {
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  const streamId = randomUUID().replaceAll('-', '');
  return {
    functionName,
    memoryMb,
    region,
    accountId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `${day}/[$LATEST]${streamId}`,
  };
}

/**
 * Context for one invocation. `deadline` is wall-clock ms. The deprecated `done/succeed/fail`
 * forward to `legacyComplete` for buffered handlers (the runtime's CallbackContext); streaming
 * handlers have no such methods in the runtime, so there they throw.
 */
export function createContext(
  identity: FunctionIdentity,
  awsRequestId: string,
  deadline: number,
  legacyComplete?: (error: unknown, result: unknown) => void,
): Context {
  const complete =
    legacyComplete ??
    (() => {
      throw new TypeError('context.done/succeed/fail are not available to streaming handlers');
    });
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: identity.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${identity.region}:${identity.accountId}:function:${identity.functionName}`,
    memoryLimitInMB: String(identity.memoryMb),
    awsRequestId,
    logGroupName: identity.logGroupName,
    logStreamName: identity.logStreamName,
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: (error?: Error, result?: unknown) => complete(error ?? null, result),
    fail: (error: Error | string) => complete(error, undefined),
    succeed: (result: unknown) => complete(null, result),
  };
}
