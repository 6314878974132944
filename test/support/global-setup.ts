/**
 * vitest globalSetup: ONE DynamoDB Local (in memory) for the whole run. Its endpoint reaches each test
 * worker through `provide`/`inject` (see worker-env.ts); every test file makes its own tables
 * (tables.ts), so files run in parallel without sharing state.
 */
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `http://127.0.0.1:<port>` of the run's DynamoDB Local. */
    dynamodbEndpoint: string;
  }
}

/** Starts DynamoDB Local; the returned function stops it at teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const ddb = await startDynamoDbLocal();
  project.provide('dynamodbEndpoint', ddb.endpoint);
  // Also for anything the main process spawns (e.g. a CLI child started outside a worker).
  process.env.DYNAMODB_ENDPOINT = ddb.endpoint;
  return () => ddb.stop();
}
