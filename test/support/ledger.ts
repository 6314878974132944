import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';

/** Time between two reads of {@link pollLedgerEntry} (ms). */
const POLL_MS = 30;

/**
 * The settled ledger entry of one request, read from this container's ledger table (test/support/tables.ts
 * or the gateway's env). The hold is written before the call and settled after the response has gone
 * out, so the entry is polled until it is no longer `held`: `tries` reads, {@link POLL_MS} ms apart
 * (100 tries: 3 s).
 * @returns the item, or undefined when no settled entry appeared (a request that must not be billed).
 */
export async function pollLedgerEntry(accountId: string, requestId: string | null, tries = 100): Promise<Record<string, unknown> | undefined> {
  for (let i = 0; i < tries; i++) {
    const out = await documentClient().send(new GetCommand({ TableName: tableNames().ledger, Key: { accountId, requestId } }));
    if (out.Item && out.Item.status !== 'held') return out.Item;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return undefined;
}
