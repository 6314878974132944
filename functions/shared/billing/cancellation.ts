/**
 * The per-item reasons of a cancelled TransactWriteItems, with the ALL_OLD image each failed
 * condition returned (`ReturnValuesOnConditionCheckFailure`; still marshalled, as lib-dynamodb
 * passes errors through untouched).
 */

/** One item's reason: its code (`None`, `ConditionalCheckFailed`, `TransactionConflict`, …) and old image. */
export interface CancellationReason {
  code: string | undefined;
  item: unknown;
}

/** The reasons in TransactItems order, or undefined when `err` is not a cancelled transaction. */
export function cancellationReasons(err: unknown): CancellationReason[] | undefined {
  if (typeof err !== 'object' || err === null || (err as { name?: unknown }).name !== 'TransactionCanceledException') return undefined;
  const reasons = (err as { CancellationReasons?: unknown }).CancellationReasons;
  if (!Array.isArray(reasons)) return [];
  return reasons.map((r: unknown) => {
    const o = (typeof r === 'object' && r !== null ? r : {}) as { Code?: unknown; Item?: unknown };
    return { code: typeof o.Code === 'string' ? o.Code : undefined, item: o.Item };
  });
}
