import { describe, expect, it } from 'vitest';
import { backoffDelayMs, cancellationCodes, isTransactionConflict, retryOnConflict } from '../../functions/shared/store/transaction-retry';

/** The shape DynamoDB returns (DynamoDB API Reference, TransactWriteItems, TransactionCanceledException). */
function cancelled(...codes: string[]) {
  return Object.assign(new Error('Transaction cancelled'), {
    name: 'TransactionCanceledException',
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}

describe('transaction conflict retry', () => {
  it('reads cancellation codes in item order', () => {
    expect(cancellationCodes(cancelled('None', 'ConditionalCheckFailed'))).toEqual(['None', 'ConditionalCheckFailed']);
    expect(cancellationCodes(new Error('other'))).toBeUndefined();
    expect(isTransactionConflict(cancelled('None', 'TransactionConflict'))).toBe(true);
    expect(isTransactionConflict(cancelled('ConditionalCheckFailed', 'None'))).toBe(false);
    expect(isTransactionConflict(Object.assign(new Error('x'), { name: 'TransactionConflictException' }))).toBe(true);
  });

  it('retries conflicts until the transaction goes through', async () => {
    let calls = 0;
    const delays: number[] = [];
    const result = await retryOnConflict(
      async () => {
        calls++;
        if (calls < 4) throw cancelled('TransactionConflict', 'None');
        return 'ok';
      },
      { sleep: async (ms) => void delays.push(ms), random: () => 0.999 },
    );
    expect(result).toBe('ok');
    expect(calls).toBe(4);
    expect(delays).toEqual([14, 29, 59]); // full jitter ceilings 15, 30, 60 ms
  });

  it('gives up after maxAttempts and rethrows other errors at once', async () => {
    let calls = 0;
    const conflict = cancelled('TransactionConflict');
    await expect(
      retryOnConflict(
        async () => {
          calls++;
          throw conflict;
        },
        { maxAttempts: 3, sleep: async () => {} },
      ),
    ).rejects.toBe(conflict);
    expect(calls).toBe(3);
    calls = 0;
    const failed = cancelled('ConditionalCheckFailed');
    await expect(
      retryOnConflict(
        async () => {
          calls++;
          throw failed;
        },
        { sleep: async () => {} },
      ),
    ).rejects.toBe(failed);
    expect(calls).toBe(1);
  });

  it('caps the backoff ceiling', () => {
    expect(backoffDelayMs(20, { random: () => 0.999999 })).toBe(399);
  });
});
